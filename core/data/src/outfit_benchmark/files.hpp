// Writing the files of the embedded outfit benchmark, for ensure_outfit_benchmark.
#pragma once

#include <filesystem>
#include <string>

#include "wscsl/data/outfit_benchmark.hpp"

namespace wscsl::data {

// Writes the whole benchmark, both layouts with their images and text features, into `dir`.
void write_benchmark(const std::filesystem::path& dir, const OutfitBenchmarkOptions& options);

// `content` as the file `path` (not atomically: the benchmark is written in a staging folder).
void write_text_file(const std::filesystem::path& path, const std::string& content);
// `dir` and the folders above it.
void create_folder(const std::filesystem::path& dir);

}  // namespace wscsl::data
