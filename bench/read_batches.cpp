// Images per second an image dataset delivers to the training step, without the step: the
// batches of a shuffled epoch of training triplets, each image flipped at random and normalised,
// read through Dataset::images as the trainer reads them (bench/data_pipeline.sh).
// Usage: wscsl_read_batches <dataset type> <file with the keys of its [dataset] table> <batches>
//        <triplets per batch>, with WSCSL_PLUGIN_PATH naming the plugins' folder.
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "wscsl/testing/harness.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    fmt::print(stderr, "usage: {} <dataset type> <options file> <batches> <triplets per batch>\n",
               argv[0]);
    return 2;
  }
  std::ifstream in(argv[2]);
  std::ostringstream body;
  body << in.rdbuf();
  const auto dataset = wscsl::testing::build<wscsl::Dataset>(argv[1], body.str());
  const wscsl::SplitData& split = dataset->split(wscsl::Split::Train);
  const std::int64_t batches = std::stoll(argv[3]);
  const std::int64_t size = std::stoll(argv[4]);
  const std::int64_t count = split.triplets.size(0);
  torch::manual_seed(1);
  const torch::Tensor order = torch::randperm(count, torch::kLong);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t b = 0; b < batches; ++b) {
    const torch::Tensor rows =
        order.index_select(0, torch::arange(b * size, (b + 1) * size, torch::kLong) % count);
    const torch::Tensor triplets = split.triplets.index_select(0, rows);
    for (std::int64_t role = 0; role < 3; ++role)
      dataset->images(
          wscsl::Split::Train, triplets.select(1, role).contiguous(),
          {true, static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(role * size)});
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{:.0f}\n", static_cast<double>(3 * size * batches) / seconds);
  return 0;
}
