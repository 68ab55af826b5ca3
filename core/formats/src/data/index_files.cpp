#include "wscsl/data/index_files.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl {

void BadRows::reject(const fs::path& file, std::int64_t line, const std::string& reason) {
  const std::string message = at_line(file, line, reason);
  if (count() >= limit_) {
    if (limit_ == 0) throw DataError(message);
    throw DataError(fmt::format("{} (bad row {}; max_bad_rows = {} were skipped already)", message,
                                count() + 1, limit_));
  }
  messages_.push_back(message);
}

std::string BadRows::summary() const {
  if (messages_.empty()) return {};
  return fmt::format("skipped {} bad row{} (max_bad_rows = {}); the first: {}", count(),
                     count() == 1 ? "" : "s", limit_, messages_.front());
}

std::string at_line(const fs::path& file, std::int64_t line, std::string_view reason) {
  return fmt::format("{}:{}: {}", file.string(), line, reason);
}

std::vector<std::string> read_lines(const fs::path& file) {
  return split_lines(read_text_file(file));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::size_t stop = end;
    if (stop > begin && text[stop - 1] == '\r') --stop;
    lines.emplace_back(text, begin, stop - begin);
    begin = end + 1;
  }
  return lines;
}

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v'; };
  while (i < line.size()) {
    while (i < line.size() && space(line[i]))
      ++i;
    const std::size_t begin = i;
    while (i < line.size() && !space(line[i]))
      ++i;
    if (i > begin) out.push_back(line.substr(begin, i - begin));
  }
  return out;
}

std::optional<std::int64_t> parse_integer(std::string_view token) {
  std::int64_t value = 0;
  const char* end = token.data() + token.size();
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (token.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_id(std::string_view token) {
  if (token.empty() || token.front() < '0' || token.front() > '9') return std::nullopt;
  return parse_integer(token);
}

std::optional<double> parse_number(std::string_view token) {
  // strtod accepts what Python's float() does for finite decimal numbers; the copy makes the
  // token NUL-terminated.
  const std::string text(token);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
    return std::nullopt;
  return value;
}

ResolvedPath resolve_under(const fs::path& root, const std::string& relative) {
  if (relative.empty()) return {{}, "empty path"};
  const fs::path given(relative);
  if (given.is_absolute())
    return {{},
            fmt::format("absolute path '{}' (paths are relative to {})", relative, root.string())};
  for (const fs::path& part : given)
    if (part == "..")
      return {{}, fmt::format("path '{}' leaves {} through '..'", relative, root.string())};
  const fs::path joined = root / given;
  std::error_code ec;
  const fs::path real = fs::canonical(joined, ec);
  if (ec) return {{}, fmt::format("no such file {} ({})", joined.string(), ec.message())};
  const auto [root_end, real_it] =
      std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  if (root_end != root.end())
    return {
        {},
        fmt::format("'{}' is a link to {}, outside {}", relative, real.string(), root.string())};
  if (!fs::is_regular_file(real, ec))
    return {{}, fmt::format("{} is not a regular file", joined.string())};
  return {real, {}};
}

fs::path existing_directory(const fs::path& path, const std::string& what) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec || !fs::is_directory(real, ec))
    throw DataError(fmt::format("{} {}: no such directory", what, path.string()));
  return real;
}

void require_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw DataError(fmt::format("{} {}: no such file", what, path.string()));
}

}  // namespace wscsl
