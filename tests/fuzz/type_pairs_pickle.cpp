// Polyvore Outfits' typespaces.p: the pickle subset of a list of (str, str) tuples.
#include "wscsl/data/type_pairs_pickle.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_text(data, size, [](const std::string& bytes) {
    for (const wscsl::TypePair& p : wscsl::parse_type_pairs_pickle(bytes, "typespaces.p"))
      if (p.first.empty() || p.second.empty()) __builtin_trap();
  });
}
