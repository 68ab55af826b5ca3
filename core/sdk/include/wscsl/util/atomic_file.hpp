// Durable file replacement: write a temporary file beside the target, flush, fsync, rename over
// the target, fsync the directory. A crash at any instant leaves either the old file or the new
// one, never a torn one.
#pragma once

#include <filesystem>
#include <string_view>

namespace wscsl {

// Throws wscsl::Error (naming the file and the system error, e.g. "No space left on device") when
// any step fails; the previous content of `path` is then untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Reads a whole file; throws wscsl::DataError naming the file when it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace wscsl
