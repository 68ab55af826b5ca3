// The text arguments of a pickle's protocol-0 string opcodes, decoded to UTF-8.
#pragma once

#include <stdexcept>
#include <string>

namespace wscsl::pickle_text {

// What is wrong with an argument; the reader adds the file and the byte offset.
struct BadArgument : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Python 2's repr of a str (the STRING opcode): quoted, with C-style escapes.
std::string unrepr(const std::string& quoted);
// Python's raw-unicode-escape (the UNICODE opcode): \uXXXX and \UXXXXXXXX, other bytes Latin-1.
std::string raw_unicode(const std::string& raw);

}  // namespace wscsl::pickle_text
