#include "wscsl/data/text_features.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "wscsl/data/index_files.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Python's str.strip() for ASCII whitespace.
std::string_view strip(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

// A decimal number (surrounding whitespace allowed, as Python's float() reads the released file)
// that is finite in float32; Python's float32 array rounds the float64 it parsed, as here.
std::optional<float> parse_value(std::string_view field) {
  field = strip(field);
  if (!field.empty() && field.front() == '+') {
    field.remove_prefix(1);
    if (!field.empty() && field.front() == '-') return std::nullopt;
  }
  double v = 0;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, v);
  if (field.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) ||
      std::fabs(v) > std::numeric_limits<float>::max())
    return std::nullopt;
  return static_cast<float>(v);
}

class HglmmReader {
 public:
  HglmmReader(const fs::path& file, std::int64_t dim)
      : file_(file), table_(dim), row_(static_cast<std::size_t>(dim)) {}

  void line(std::string_view text, std::int64_t number) {
    if (text.size() > hglmm_max_line_bytes(table_.dim()))
      throw DataError(at_line(file_, number,
                              fmt::format("the line is longer than {} bytes, the bound of an "
                                          "HGLMM line of {} values",
                                          hglmm_max_line_bytes(table_.dim()), table_.dim())));
    text = strip(text);
    if (text.empty()) return;
    const std::int64_t f = table_.dim();
    // The comma that ends the key is the f-th from the end.
    std::size_t cut = text.size();
    for (std::int64_t k = 0; k < f; ++k) {
      cut = cut == 0 ? std::string_view::npos : text.rfind(',', cut - 1);
      if (cut == std::string_view::npos)
        throw DataError(at_line(
            file_, number,
            fmt::format("{} comma-separated fields; expected a key followed by {} values (dim)",
                        std::count(text.begin(), text.end(), ',') + 1, f)));
    }
    const std::string_view key = text.substr(0, cut);
    if (key.empty())
      throw DataError(
          at_line(file_, number, fmt::format("no key before the {} values; expected its text", f)));
    std::size_t begin = cut + 1;
    for (std::int64_t k = 0; k < f; ++k) {
      const std::size_t end = k + 1 == f ? text.size() : text.find(',', begin);
      const std::string_view field = text.substr(begin, end - begin);
      const std::optional<float> v = parse_value(field);
      if (!v)
        throw DataError(at_line(
            file_, number,
            fmt::format("value {} of {} is {}; expected a finite decimal number within float32",
                        k + 1, f, quoted_excerpt(field))));
      row_[static_cast<std::size_t>(k)] = *v;
      begin = end + 1;
    }
    const std::size_t last_comma = key.rfind(',');
    if (parse_value(last_comma == std::string_view::npos ? key : key.substr(last_comma + 1)))
      ++numeric_tails_;
    if (lines_++ == 0) first_line_ = number;
    table_.add(std::string(key), row_.data(), number);
  }

  TextFeatureTable finish() {
    if (lines_ == 0)
      throw DataError(fmt::format(
          "{}: no feature line; expected one line per text, its key followed by {} values",
          file_.string(), table_.dim()));
    if (numeric_tails_ == lines_)
      throw DataError(at_line(
          file_, first_line_,
          fmt::format("every line has a number just before its last {0} values: the features "
                      "are longer than dim = {0}",
                      table_.dim())));
    return std::move(table_);
  }

 private:
  const fs::path& file_;
  TextFeatureTable table_;
  std::vector<float> row_;
  std::int64_t lines_ = 0;
  std::int64_t first_line_ = 0;
  std::int64_t numeric_tails_ = 0;  // lines whose key ends with a field that is a number
};

}  // namespace

std::int64_t TextFeatureTable::find(const std::string& key) const {
  const auto it = rows_.find(key);
  return it == rows_.end() ? -1 : it->second;
}

void TextFeatureTable::add(const std::string& key, const float* values, std::int64_t line) {
  const auto [it, inserted] = rows_.try_emplace(key, size());
  if (!inserted) {
    if (repeated_++ == 0)
      first_repeat_ =
          fmt::format("line {} repeats the key {} of line {}", line, quoted_excerpt(key),
                      lines_[static_cast<std::size_t>(it->second)]);
    std::copy(values, values + dim_, values_.begin() + it->second * dim_);
    return;
  }
  keys_.push_back(key);
  lines_.push_back(line);
  values_.insert(values_.end(), values, values + dim_);
}

TextFeatureTable parse_hglmm_features(const std::string& text, const fs::path& file,
                                      std::int64_t dim) {
  HglmmReader reader(file, dim);
  const std::string_view all(text);
  std::size_t begin = 0;
  for (std::int64_t number = 1; begin < all.size(); ++number) {
    std::size_t end = all.find('\n', begin);
    if (end == std::string_view::npos) end = all.size();
    reader.line(all.substr(begin, end - begin), number);
    begin = end + 1;
  }
  return reader.finish();
}

std::size_t hglmm_max_line_bytes(std::int64_t dim) {
  return (std::size_t{1} << 16) + 64 * static_cast<std::size_t>(dim);
}

TextFeatureTable read_hglmm_features(const fs::path& file, std::int64_t dim) {
  LineReader lines(
      file, hglmm_max_line_bytes(dim),
      fmt::format("an HGLMM line of {} values (64 KiB of key, 64 bytes a value)", dim));
  HglmmReader reader(file, dim);
  std::string line;
  while (lines.next(line))
    reader.line(line, lines.number());
  return reader.finish();
}

std::vector<std::string> read_text_keys(const fs::path& file) {
  std::vector<std::string> keys = read_lines(file);
  if (keys.empty())
    throw DataError(
        fmt::format("{}: no keys; expected the text of each row, one per line", file.string()));
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i].empty())
      throw DataError(at_line(file, static_cast<std::int64_t>(i + 1),
                              fmt::format("an empty line; expected the text of row {}", i)));
  return keys;
}

TextFeatureTable text_features_from_npy(const NpyMatrix& matrix, const fs::path& matrix_file,
                                        const std::vector<std::string>& keys,
                                        const fs::path& keys_file) {
  if (static_cast<std::int64_t>(keys.size()) != matrix.rows)
    throw DataError(fmt::format("{} lists {} keys and {} has {} rows; expected one key per row",
                                keys_file.string(), keys.size(), matrix_file.string(),
                                matrix.rows));
  TextFeatureTable table(matrix.cols);
  for (std::size_t i = 0; i < keys.size(); ++i)
    table.add(keys[i], matrix.values.data() + i * static_cast<std::size_t>(matrix.cols),
              static_cast<std::int64_t>(i + 1));
  return table;
}

void append_hglmm_line(std::string& out, const std::string& key,
                       const std::vector<double>& values) {
  out += key;
  for (const double v : values) {
    if (v == 0)
      out += ",0";
    else
      fmt::format_to(std::back_inserter(out), ",{:.4g}", v);
  }
  out += '\n';
}

}  // namespace wscsl
