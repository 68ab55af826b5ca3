#include "wscsl/data/npy.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "byte_cursor.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

// The value of a header key: a quoted string, True/False, or a tuple of non-negative integers.
struct HeaderValue {
  enum class Kind { Text, Boolean, Tuple } kind = Kind::Text;
  std::string text;
  bool boolean = false;
  std::vector<std::int64_t> tuple;
};

class NpyReader : ByteCursor {
 public:
  // `bytes` is the whole file, or with `header_only` its first bytes of `file_size`: the header is
  // then checked against the file's size and no value is read.
  NpyReader(const std::string& bytes, const fs::path& file, std::uint64_t file_size,
            bool header_only)
      : ByteCursor(bytes, file), file_size_(file_size), header_only_(header_only) {}

  NpyMatrix run() {
    static const std::string magic = "\x93NUMPY";
    if (b_.compare(0, magic.size(), magic) != 0)
      fail(0, "the file does not start with \\x93NUMPY; expected a NumPy .npy file");
    pos_ = magic.size();
    const auto major = static_cast<unsigned char>(next_byte("the format version"));
    next_byte("the format version");
    if (major < 1 || major > 3)
      fail(6, fmt::format("format version {}; expected 1, 2 or 3", static_cast<int>(major)));
    const std::uint64_t length = little_endian(major == 1 ? 2 : 4, "the header length");
    if (length > b_.size() - pos_)
      fail(pos_, b_.size() < file_size_
                     ? fmt::format("the header has {} bytes, more than the {} a .npy header may "
                                   "have",
                                   length, kMaxNpyHeaderBytes)
                     : fmt::format("the header of {} bytes runs past the end of the file", length));
    end_ = pos_ + static_cast<std::size_t>(length);
    const std::map<std::string, HeaderValue> header = dictionary();
    pos_ = end_;
    return matrix(header);
  }

 private:
  // Within the header only.
  void skip_spaces() {
    while (pos_ < end_ && (b_[pos_] == ' ' || b_[pos_] == '\n'))
      ++pos_;
  }
  bool at(char c) {
    skip_spaces();
    return pos_ < end_ && b_[pos_] == c;
  }
  void expect(char c, const char* where) {
    if (!at(c)) fail(pos_, fmt::format("expected '{}' {} of the header dictionary", c, where));
    ++pos_;
  }

  std::string quoted() {
    skip_spaces();
    const char quote = pos_ < end_ ? b_[pos_] : '\0';
    if (quote != '\'' && quote != '"') fail(pos_, "expected a quoted string in the header");
    const std::size_t close = b_.find(quote, pos_ + 1);
    if (close == std::string::npos || close >= end_)
      fail(pos_, "a string in the header is not closed");
    std::string s = b_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    return s;
  }

  std::int64_t integer() {
    skip_spaces();
    const std::size_t start = pos_;
    std::int64_t v = 0;
    while (pos_ < end_ && b_[pos_] >= '0' && b_[pos_] <= '9') {
      if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
        fail(start, "a dimension of the shape is too large");
      v = v * 10 + (b_[pos_++] - '0');
    }
    if (pos_ == start) fail(start, "expected a non-negative integer in the shape");
    return v;
  }

  HeaderValue value() {
    HeaderValue v;
    if (at('\'') || at('"')) {
      v.text = quoted();
      return v;
    }
    for (const auto& [word, truth] : {std::pair{"True", true}, std::pair{"False", false}})
      if (pos_ + std::strlen(word) <= end_ && b_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        v.kind = HeaderValue::Kind::Boolean;
        v.boolean = truth;
        return v;
      }
    expect('(', "at the start of a value (a string, True, False or a tuple)");
    v.kind = HeaderValue::Kind::Tuple;
    while (!at(')')) {
      v.tuple.push_back(integer());
      if (!at(')')) expect(',', "between the dimensions of the shape");
    }
    ++pos_;
    return v;
  }

  std::map<std::string, HeaderValue> dictionary() {
    std::map<std::string, HeaderValue> out;
    expect('{', "at the start");
    while (!at('}')) {
      const std::size_t key_at = pos_;
      const std::string key = quoted();
      if (key != "descr" && key != "fortran_order" && key != "shape")
        fail(key_at,
             fmt::format("unknown header key '{}'; expected descr, fortran_order and shape", key));
      if (out.count(key)) fail(key_at, fmt::format("the header key '{}' appears twice", key));
      expect(':', "after a key");
      out[key] = value();
      if (!at('}')) expect(',', "between entries");
    }
    ++pos_;
    skip_spaces();
    if (pos_ != end_) fail(pos_, "text follows the header dictionary");
    for (const char* key : {"descr", "fortran_order", "shape"})
      if (!out.count(key)) fail(end_, fmt::format("the header has no '{}'", key));
    return out;
  }

  NpyMatrix matrix(const std::map<std::string, HeaderValue>& header) {
    const HeaderValue& descr = header.at("descr");
    const HeaderValue& order = header.at("fortran_order");
    const HeaderValue& shape = header.at("shape");
    if (descr.kind != HeaderValue::Kind::Text || (descr.text != "<f4" && descr.text != "<f8"))
      fail(pos_, fmt::format("the dtype is {}; expected '<f4' (float32) or '<f8' (float64)",
                             descr.kind == HeaderValue::Kind::Text ? "'" + descr.text + "'"
                                                                   : "not a string"));
    if (order.kind != HeaderValue::Kind::Boolean) fail(pos_, "fortran_order is not True or False");
    if (shape.kind != HeaderValue::Kind::Tuple || shape.tuple.size() != 2 || shape.tuple[0] < 1 ||
        shape.tuple[1] < 1)
      fail(pos_, "the shape is not (N, F) with N, F ≥ 1; expected a matrix of one row per key");
    NpyMatrix m;
    m.rows = shape.tuple[0];
    m.cols = shape.tuple[1];
    if (m.cols > kMaxNpyColumns)
      fail(pos_, fmt::format("the shape ({}, {}) has more than {} columns; expected one feature of "
                             "at most that many values per row",
                             m.rows, m.cols, kMaxNpyColumns));
    const std::size_t item = descr.text == "<f4" ? 4 : 8;
    const std::uint64_t available = file_size_ - pos_;
    if (static_cast<std::uint64_t>(m.cols) >
            available / item / static_cast<std::uint64_t>(m.rows) ||
        static_cast<std::uint64_t>(m.rows * m.cols) * item != available)
      fail(pos_, fmt::format("{} bytes of data follow the header; a ({}, {}) matrix of {} needs {}",
                             available, m.rows, m.cols, descr.text,
                             static_cast<double>(m.rows) * static_cast<double>(m.cols) *
                                 static_cast<double>(item)));
    if (header_only_) return m;
    const auto n = static_cast<std::size_t>(m.rows * m.cols);
    m.values.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      double v = 0;
      if (item == 4) {
        float f = 0;
        std::memcpy(&f, b_.data() + pos_ + k * 4, 4);
        v = f;
      } else {
        std::memcpy(&v, b_.data() + pos_ + k * 8, 8);
      }
      // Fortran order stores column by column.
      const std::size_t r = order.boolean ? k % static_cast<std::size_t>(m.rows)
                                          : k / static_cast<std::size_t>(m.cols);
      const std::size_t c = order.boolean ? k / static_cast<std::size_t>(m.rows)
                                          : k % static_cast<std::size_t>(m.cols);
      if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
        fail(pos_ + k * item,
             fmt::format("the value at row {}, column {} is {}; expected a finite float32", r, c,
                         v));
      m.values[r * static_cast<std::size_t>(m.cols) + c] = static_cast<float>(v);
    }
    return m;
  }

  std::uint64_t file_size_;
  bool header_only_;
  std::size_t end_ = 0;  // of the header
};

}  // namespace

NpyMatrix parse_npy_matrix(const std::string& bytes, const fs::path& file) {
  return NpyReader(bytes, file, bytes.size(), false).run();
}

NpyMatrix read_npy_matrix(const fs::path& file) {
  // The header first, so that a shape out of bounds is refused before the data are read.
  const std::uintmax_t size = checked_file_size(file, kMaxBinaryFileBytes);
  NpyReader(read_file_prefix(file, kMaxNpyHeaderBytes + 12), file, size, true).run();
  return parse_npy_matrix(read_file(file), file);
}

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape) {
  // As NumPy spells it: (), (n,), (m, n).
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  return npy_header_of_dictionary(
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims));
}

std::string npy_header_of_dictionary(std::string dictionary) {
  // magic(6) version(2) length(2) dictionary '\n'
  const std::size_t unpadded = 10 + dictionary.size() + 1;
  dictionary += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dictionary.size() & 0xff);
  header += static_cast<char>((dictionary.size() >> 8) & 0xff);
  return header + dictionary;
}

void write_npy(const fs::path& file, const std::string& descr,
               const std::vector<std::int64_t>& shape, std::string_view data) {
  std::string bytes = npy_header(descr, shape);
  bytes.append(data);
  write_file_atomically(file, bytes);
}

}  // namespace wscsl
