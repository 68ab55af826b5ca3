#include "byte_cursor.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl {

void ByteCursor::fail(std::size_t at, const std::string& what) const {
  throw DataError(fmt::format("{}: byte {}: {}", file_.string(), at, what));
}

char ByteCursor::next_byte(const char* what) {
  if (pos_ >= b_.size()) fail(pos_, fmt::format("the file ends where {} was expected", what));
  return b_[pos_++];
}

std::string ByteCursor::take(std::uint64_t n, const char* what) {
  if (n > b_.size() - pos_)
    fail(pos_, fmt::format("{} of {} bytes runs past the end of the file", what, n));
  std::string out = b_.substr(pos_, static_cast<std::size_t>(n));
  pos_ += static_cast<std::size_t>(n);
  return out;
}

std::uint64_t ByteCursor::little_endian(int bytes, const char* what) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= std::uint64_t{static_cast<unsigned char>(next_byte(what))} << (8 * i);
  return v;
}

}  // namespace wscsl
