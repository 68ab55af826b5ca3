// Durable file replacement: write a temporary file beside the target, flush, fsync, rename over
// the target, fsync the directory. A crash at any instant leaves either the old file or the new
// one, never a torn one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace wscsl {

// Throws wscsl::Error (naming the file and the system error, e.g. "No space left on device") when
// any step fails; the previous content of `path` is then untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// The steps of an atomic write, told to a caller that marks them (see fault_injection.hpp).
enum class WriteStep { opened, part_written, synced, renamed };
// Writes `parts` one after another as the new content of `path`, atomically as above, calling
// `on_step` after each step (after each part with its index; otherwise with 0).
void write_file_atomically(const std::filesystem::path& path,
                           const std::vector<std::string_view>& parts,
                           const std::function<void(WriteStep, std::size_t)>& on_step);

// Removes from `dir` the temporary files of atomic writes whose process died before renaming
// them. Only safe while no other process writes into `dir` (a run directory under its lock).
void remove_abandoned_writes(const std::filesystem::path& dir);

// Largest files wscsl reads whole: checkpoints and weights, and text inputs (attribute and index
// files, triplet lists, results).
inline constexpr std::uintmax_t kMaxBinaryFileBytes = std::uintmax_t{16} << 30;
inline constexpr std::uintmax_t kMaxTextFileBytes = std::uintmax_t{512} << 20;

// Why `path` cannot be read as a data file, as the end of a sentence that starts with the path:
// "no such file", "is a FIFO; expected a regular file", "is a character device (a link to
// /dev/zero); expected a regular file", "is a directory; ..."; empty for a regular file (links
// followed).
std::string file_problem(const std::filesystem::path& path);

// Whether an optional data file is there: false when nothing is at `path`; DataError
// "<path>: is a FIFO; expected a regular file" when something other than a regular file is.
bool optional_file_present(const std::filesystem::path& path);

// Reads a whole file, which must be a regular file (links followed: not a FIFO, a device or a
// directory) of at most `max_bytes`, checked before anything is read. Throws wscsl::DataError
// naming the file otherwise.
std::string read_file(const std::filesystem::path& path,
                      std::uintmax_t max_bytes = kMaxBinaryFileBytes);

// The size of the regular file `path`, refused as read_file refuses it when over `max_bytes`.
std::uintmax_t checked_file_size(const std::filesystem::path& path, std::uintmax_t max_bytes);

// The first `max_bytes` of the regular file `path` (all of it when it is shorter).
std::string read_file_prefix(const std::filesystem::path& path, std::size_t max_bytes);

// read_file for text, without a leading UTF-8 byte-order mark (spreadsheets write one).
std::string read_text_file(const std::filesystem::path& path,
                           std::uintmax_t max_bytes = kMaxTextFileBytes);

}  // namespace wscsl
