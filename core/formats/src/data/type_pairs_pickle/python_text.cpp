#include "python_text.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace wscsl::pickle_text {
namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string unrepr(const std::string& quoted) {
  if (quoted.size() < 2 || quoted.front() != quoted.back() ||
      (quoted.front() != '\'' && quoted.front() != '"'))
    throw BadArgument("the STRING argument is not quoted; expected '...' or \"...\"");
  std::string out;
  for (std::size_t i = 1; i + 1 < quoted.size(); ++i) {
    const char c = quoted[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 2 >= quoted.size()) throw BadArgument("the STRING argument ends with a lone backslash");
    const char e = quoted[++i];
    switch (e) {
      case '\\':
      case '\'':
      case '"':
        out += e;
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'x': {
        const int hi = i + 2 < quoted.size() - 1 ? hex_value(quoted[i + 1]) : -1;
        const int lo = i + 2 < quoted.size() - 1 ? hex_value(quoted[i + 2]) : -1;
        if (hi < 0 || lo < 0)
          throw BadArgument("a \\x escape of the STRING argument lacks 2 hex digits");
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default:
        throw BadArgument(
            fmt::format("the STRING argument has the escape '\\{}'; expected one of "
                        "\\\\ \\' \\\" \\n \\t \\r \\xhh",
                        e));
    }
  }
  return out;
}

std::string raw_unicode(const std::string& raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    const bool escape = c == '\\' && i + 1 < raw.size() && (raw[i + 1] == 'u' || raw[i + 1] == 'U');
    if (!escape) {
      append_utf8(out, c);
      continue;
    }
    const std::size_t digits = raw[i + 1] == 'u' ? 4 : 8;
    if (i + 2 + digits > raw.size())
      throw BadArgument("a \\u escape of the UNICODE argument is cut short");
    std::uint32_t cp = 0;
    for (std::size_t d = 0; d < digits; ++d) {
      const int h = hex_value(raw[i + 2 + d]);
      if (h < 0) throw BadArgument("a \\u escape of the UNICODE argument has a non-hex digit");
      cp = cp * 16 + static_cast<std::uint32_t>(h);
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      throw BadArgument(
          fmt::format("the UNICODE argument escapes U+{:X}, which is not a character", cp));
    append_utf8(out, cp);
    i += 1 + digits;
  }
  return out;
}

}  // namespace wscsl::pickle_text
