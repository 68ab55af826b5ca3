// Reading the bytes of a binary file in order, for the readers of binary formats (.npy, pickles):
// every error is a DataError naming the file and the byte where the problem is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

namespace wscsl {

class ByteCursor {
 protected:
  ByteCursor(const std::string& bytes, std::filesystem::path file)
      : b_(bytes), file_(std::move(file)) {}

  [[noreturn]] void fail(std::size_t at, const std::string& what) const;
  // `what` names the byte expected, for the error where the file ends before it.
  char next_byte(const char* what);
  // The next `n` bytes; an error, before anything is read, where they run past the end.
  std::string take(std::uint64_t n, const char* what);
  // An unsigned integer of `bytes` bytes, least significant first.
  std::uint64_t little_endian(int bytes, const char* what);

  const std::string& b_;
  std::filesystem::path file_;
  std::size_t pos_ = 0;
};

}  // namespace wscsl
