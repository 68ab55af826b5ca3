// Training checkpoints: model, optimiser, RNG and loop position in one file, written atomically,
// sealed by a manifest (checkpoint_manifest.hpp: the archive's size and SHA-256, the step, the
// pipeline's hash, the versions) that is verified before LibTorch's deserialiser sees a byte, so
// a damaged, truncated or foreign file is refused, never loaded. Once verified, a checkpoint is
// trusted input for LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace wscsl::host {

struct TrainingState {
  std::int64_t epoch = 0;        // the epoch in progress, or the next one to run
  std::int64_t step = 0;         // steps of `epoch` already taken
  std::int64_t global_step = 0;  // steps taken since the start of the run
  double epoch_loss_sum = 0.0;   // running sums of the epoch in progress
  std::int64_t epoch_loss_count = 0;
  double best_value = std::numeric_limits<double>::quiet_NaN();
  std::int64_t best_epoch = -1;
  std::int64_t threads = 0;     // intra-op threads the run used
  std::int64_t world_size = 1;  // processes that trained it
  std::string config;           // the resolved pipeline (without provenance) the run trains
};

// Writes everything needed to continue bit-identically. The file is replaced atomically, so a
// crash leaves the previous checkpoint intact.
void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                     torch::optim::Optimizer* optimizer, const TrainingState& state);

// Restores a checkpoint into `model` (and `optimizer` and the global RNG when given) and leaves
// the model and the optimiser's state on `device`, whichever device the checkpoint was written
// from. Throws DataError naming the file and what is damaged, missing or mismatched.
TrainingState load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                              torch::optim::Optimizer* optimizer, bool restore_rng,
                              torch::Device device);

// The first of `candidates` (newest first) whose bytes verify. Each one skipped is reported in
// `skipped` as the sentence saying why; when none verifies, throws DataError with those sentences.
std::filesystem::path newest_verified(const std::vector<std::filesystem::path>& candidates,
                                      std::vector<std::string>& skipped);

}  // namespace wscsl::host
