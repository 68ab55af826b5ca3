#include <cstdint>

#include "wscsl/data/type_pairs_pickle.hpp"

namespace wscsl {

// PROTO 2, EMPTY_LIST, then per pair BINUNICODE ×2, TUPLE2, APPEND, and STOP.
std::string pickle_type_pairs(const std::vector<TypePair>& pairs) {
  std::string out = "\x80\x02]";
  auto unicode = [&](const std::string& s) {
    out += 'X';
    const auto n = static_cast<std::uint32_t>(s.size());
    for (int b = 0; b < 4; ++b)
      out += static_cast<char>((n >> (8 * b)) & 0xFF);
    out += s;
  };
  for (const auto& [a, b] : pairs) {
    unicode(a);
    unicode(b);
    out += '\x86';
    out += 'a';
  }
  out += '.';
  return out;
}

}  // namespace wscsl
