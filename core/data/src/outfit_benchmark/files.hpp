// Writing the files of the embedded outfit benchmark, for ensure_outfit_benchmark.
#pragma once

#include <filesystem>
#include <string>

#include "wscsl/data/generated_folder.hpp"
#include "wscsl/data/outfit_benchmark.hpp"

namespace wscsl::data {

// Writes the whole benchmark, both layouts with their images and text features, into `dir`.
void write_benchmark(const std::filesystem::path& dir, const OutfitBenchmarkOptions& options);

}  // namespace wscsl::data
