// The embedded outfit benchmark on disk, through the shared staging, lock and stamp of
// generated_folder.hpp.
#include <fmt/format.h>

#include "files.hpp"
#include "wscsl/data/generated_folder.hpp"

namespace wscsl::data {
namespace {

constexpr int kFormatVersion = 2;  // 2: text keys, train_hglmm_pca6000.txt

std::string stamp_text(const OutfitBenchmarkOptions& options) {
  return fmt::format("wscsl outfit benchmark {}\npreset {}\nseed {}\nfashion_mnist_root {}\n",
                     kFormatVersion, options.preset == OutfitPreset::Tiny ? "tiny" : "medium",
                     options.seed, options.fashion_mnist_root.string());
}

}  // namespace

void ensure_outfit_benchmark(const std::filesystem::path& root,
                             const OutfitBenchmarkOptions& options) {
  ensure_generated_folder(
      root, {"outfit_benchmark", "outfit benchmark", stamp_text(options)},
      [&](const std::filesystem::path& staging) { write_benchmark(staging, options); });
}

}  // namespace wscsl::data
