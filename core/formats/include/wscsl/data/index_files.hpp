// Strict reading of a dataset's index files (image lists, triplet lists, attribute tables): every
// problem is reported as "file:line: reason", and a dataset may allow skipping a limited number of
// bad rows instead of stopping at the first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wscsl/error.hpp"

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
  // The warnings not yet given, one per file whose skipped rows grew since the last call: "skipped
  // 2 bad rows of file (max_bad_rows = 5); the first: file:line: reason". A file is warned about
  // once, and again only if more of its rows are skipped later.
  std::vector<std::string> unreported();

 private:
  struct FileRows {
    std::filesystem::path file;
    std::int64_t count = 0;
    std::int64_t reported = 0;
    std::string first;  // its first skipped row's message
  };
  std::int64_t limit_;
  std::vector<std::string> messages_;
  std::vector<FileRows> files_;  // in the order first met
};

// The problems met reading a dataset's files, one sentence each, reported together so that one
// `wscsl check` names them all.
class FileProblems {
 public:
  // Runs `read`; a DataError it throws is kept, and false returned.
  template <class Read>
  bool attempt(Read&& read);
  void add(std::string problem) { problems_.push_back(std::move(problem)); }
  bool empty() const { return problems_.empty(); }
  // Throws DataError when there is a problem: the one sentence, or "N problems in the dataset's
  // files:" and each on a line of its own (the first kMaxReported).
  void throw_if_any() const;

  static constexpr std::size_t kMaxReported = 50;

 private:
  std::vector<std::string> problems_;
};

// "file:line: reason", the form of every index-file message.
std::string at_line(const std::filesystem::path& file, std::int64_t line, std::string_view reason);

// The lines of a text file, without their line breaks ("\n" or "\r\n"); a final line break does
// not start another line. Throws DataError naming the file when it cannot be read.
std::vector<std::string> read_lines(const std::filesystem::path& file);
// The same for text already read.
std::vector<std::string> split_lines(const std::string& text);

// The lines of a text file read one at a time, without their line breaks ("\n" or "\r\n"), a
// final line break starting no other line; a line longer than `max_line_bytes` is refused
// (DataError "file:line: the line is longer than N bytes, the bound of <what>") before more of it
// is held.
class LineReader {
 public:
  LineReader(const std::filesystem::path& file, std::size_t max_line_bytes, std::string what);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line into `line`; false at the end of the file.
  bool next(std::string& line);
  // The number of the line `next` gave last, from 1.
  std::int64_t number() const { return number_; }

 private:
  struct Stream;
  std::filesystem::path file_;
  std::size_t max_line_bytes_;
  std::string what_;
  std::unique_ptr<Stream> in_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  std::int64_t number_ = 0;
};

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
// DataError "<what> <path>: no such file" (or "is a FIFO; expected a regular file", file_problem)
// unless `path` is a regular file.
void require_file(const std::filesystem::path& path, const std::string& what);

template <class Read>
bool FileProblems::attempt(Read&& read) {
  try {
    read();
    return true;
  } catch (const DataError& e) {
    add(e.what());
    return false;
  }
}

}  // namespace wscsl
