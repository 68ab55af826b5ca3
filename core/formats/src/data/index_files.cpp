#include "wscsl/data/index_files.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

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
  auto it =
      std::find_if(files_.begin(), files_.end(), [&](const FileRows& f) { return f.file == file; });
  if (it == files_.end()) it = files_.insert(files_.end(), FileRows{file, 0, 0, message});
  ++it->count;
}

std::vector<std::string> BadRows::unreported() {
  std::vector<std::string> out;
  for (FileRows& f : files_) {
    if (f.count == f.reported) continue;
    out.push_back(fmt::format("skipped {} bad row{} of {} (max_bad_rows = {}); the first: {}",
                              f.count, f.count == 1 ? "" : "s", f.file.string(), limit_, f.first));
    f.reported = f.count;
  }
  return out;
}

void FileProblems::throw_if_any() const {
  if (problems_.empty()) return;
  if (problems_.size() == 1) throw DataError(problems_.front());
  std::string message = fmt::format("{} problems in the dataset's files:", problems_.size());
  for (std::size_t i = 0; i < problems_.size() && i < kMaxReported; ++i)
    message += "\n  " + problems_[i];
  if (problems_.size() > kMaxReported)
    message += fmt::format("\n  ... and {} more", problems_.size() - kMaxReported);
  throw DataError(message);
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

struct LineReader::Stream {
  std::ifstream in;
};

LineReader::LineReader(const fs::path& file, std::size_t max_line_bytes, std::string what)
    : file_(file),
      max_line_bytes_(max_line_bytes),
      what_(std::move(what)),
      in_(std::make_unique<Stream>()),
      buffer_(std::size_t{1} << 16) {
  const std::string problem = file_problem(file);
  if (!problem.empty()) throw DataError(fmt::format("{}: {}", file.string(), problem));
  in_->in.open(file, std::ios::binary);
  if (!in_->in) throw DataError(fmt::format("{}: cannot open file", file.string()));
}

LineReader::~LineReader() = default;

bool LineReader::next(std::string& line) {
  line.clear();
  bool started = false;
  while (true) {
    if (begin_ == end_) {
      in_->in.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
      if (in_->in.bad()) throw DataError(fmt::format("{}: read error", file_.string()));
      begin_ = 0;
      end_ = static_cast<std::size_t>(in_->in.gcount());
      if (end_ == 0) {
        if (!started) return false;
        break;
      }
    }
    started = true;
    const char* from = buffer_.data() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(from, '\n', end_ - begin_));
    const std::size_t length = newline ? static_cast<std::size_t>(newline - from) : end_ - begin_;
    if (line.size() + length > max_line_bytes_ + 1)  // + 1: the "\r" of a "\r\n"
      throw DataError(at_line(file_, number_ + 1,
                              fmt::format("the line is longer than {} bytes, the bound of {}",
                                          max_line_bytes_, what_)));
    line.append(from, length);
    begin_ += length;
    if (newline) {
      ++begin_;
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > max_line_bytes_)
    throw DataError(at_line(
        file_, number_ + 1,
        fmt::format("the line is longer than {} bytes, the bound of {}", max_line_bytes_, what_)));
  ++number_;
  return true;
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
  const std::string problem = file_problem(real);
  if (!problem.empty()) return {{}, fmt::format("{} {}", joined.string(), problem)};
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
  const std::string problem = file_problem(path);
  if (!problem.empty()) throw DataError(fmt::format("{} {}: {}", what, path.string(), problem));
}

}  // namespace wscsl
