// CSN's triplet lists (both the plain and DiscoverNet's half-reverse form) and its image list.
#include "wscsl/data/csn_lists.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_text(data, size, [](const std::string& text) {
    constexpr std::int64_t kImages = 1000;
    const std::vector<std::string> lines = wscsl::split_lines(text);
    for (const bool half_reverse : {false, true}) {
      wscsl::BadRows bad(4);
      for (const wscsl::CsnTriplet& t : wscsl::csn_triplets_from_lines(
               lines, "fuzz.txt", kImages, "filenames.json", half_reverse, bad))
        if (t.anchor < 0 || t.anchor >= kImages || t.close < 0 || t.close >= kImages || t.far < 0 ||
            t.far >= kImages)
          __builtin_trap();
    }
    for (const std::string& line : lines)
      wscsl::valid_csn_name(line);
  });
}
