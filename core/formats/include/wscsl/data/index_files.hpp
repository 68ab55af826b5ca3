// Strict reading of a dataset's index files (image lists, triplet lists, attribute tables): every
// problem is reported as "file:line: reason", and a dataset may allow skipping a limited number of
// bad rows instead of stopping at the first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wscsl {

// The bad rows a dataset met while reading its files. Each is an error unless the dataset allows
// skipping up to `limit` of them; the row after the limit is an error naming the limit.
class BadRows {
 public:
  explicit BadRows(std::int64_t limit = 0) : limit_(limit) {}

  // Records a bad row (the caller then skips it), or throws DataError "file:line: reason" when
  // no more may be skipped.
  void reject(const std::filesystem::path& file, std::int64_t line, const std::string& reason);
  std::int64_t count() const { return static_cast<std::int64_t>(messages_.size()); }
  std::int64_t limit() const { return limit_; }
  // Every skipped row's "file:line: reason", in the order met.
  const std::vector<std::string>& messages() const { return messages_; }
  // "skipped 2 bad rows (max_bad_rows = 5); the first: file:line: reason"; empty when none.
  std::string summary() const;

 private:
  std::int64_t limit_;
  std::vector<std::string> messages_;
};

// "file:line: reason", the form of every index-file message.
std::string at_line(const std::filesystem::path& file, std::int64_t line, std::string_view reason);

// The lines of a text file, without their line breaks ("\n" or "\r\n"); a final line break does
// not start another line. Throws DataError naming the file when it cannot be read.
std::vector<std::string> read_lines(const std::filesystem::path& file);
// The same for text already read.
std::vector<std::string> split_lines(const std::string& text);

// Whitespace-separated tokens of a line.
std::vector<std::string_view> tokens(std::string_view line);

// Strict numbers: the whole token must be the number (no sign for ids, no trailing text).
std::optional<std::int64_t> parse_id(std::string_view token);
std::optional<std::int64_t> parse_integer(std::string_view token);
std::optional<double> parse_number(std::string_view token);

// The file `relative` names under `root` (a canonical directory), or the reason it may not be
// used: an absolute path, a '..' component, a link that resolves outside `root`, a missing file.
struct ResolvedPath {
  std::filesystem::path path;  // empty when refused
  std::string problem;         // why it was refused
};
ResolvedPath resolve_under(const std::filesystem::path& root, const std::string& relative);

// `path` made absolute and canonical, or DataError "<what> <path>: no such directory".
std::filesystem::path existing_directory(const std::filesystem::path& path,
                                         const std::string& what);
// DataError "<what> <path>: no such file" unless `path` is a regular file.
void require_file(const std::filesystem::path& path, const std::string& what);

}  // namespace wscsl
