#include "checkpoint.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/archive.h>
#include <torch/version.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"
#include "wscsl/util/fault_injection.hpp"
#include "wscsl/version.hpp"

namespace wscsl::host {
namespace {

constexpr std::int64_t kFormatVersion = 3;  // 3: the JSON manifest after the archive

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw DataError(fmt::format("{}: {}", path.string(), what));
}

// Marks each step of the write with its fault point (see fault_injection.hpp).
void mark(WriteStep step, std::size_t part) {
  switch (step) {
    case WriteStep::opened:
      fault_point(faults::kBeforeData);
      break;
    case WriteStep::part_written:
      if (part == 0) fault_point(faults::kAfterData);
      break;
    case WriteStep::synced:
      fault_point(faults::kAfterManifest);
      break;
    case WriteStep::renamed:
      fault_point(faults::kAfterRename);
      break;
  }
}

// Moves the optimiser's per-parameter state (Adam's moments, SGD's momentum) to `device`, where the
// parameters are.
void move_state(torch::optim::Optimizer& optimizer, torch::Device device) {
  const auto moved = [&](const torch::Tensor& t) { return t.defined() ? t.to(device) : t; };
  for (auto& entry : optimizer.state()) {
    torch::optim::OptimizerParamState& state = *entry.second;
    if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(&state)) {
      adam->exp_avg(moved(adam->exp_avg()));
      adam->exp_avg_sq(moved(adam->exp_avg_sq()));
      adam->max_exp_avg_sq(moved(adam->max_exp_avg_sq()));
    } else if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(&state)) {
      sgd->momentum_buffer(moved(sgd->momentum_buffer()));
    } else {
      throw Error("internal: a checkpoint holds the state of an optimiser other than Adam or SGD");
    }
  }
}

}  // namespace

void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                     torch::optim::Optimizer* optimizer, const TrainingState& state) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.write("format_version", c10::IValue(kFormatVersion));
  archive.write("epoch", c10::IValue(state.epoch));
  archive.write("step", c10::IValue(state.step));
  archive.write("global_step", c10::IValue(state.global_step));
  archive.write("epoch_loss_sum", c10::IValue(state.epoch_loss_sum));
  archive.write("epoch_loss_count", c10::IValue(state.epoch_loss_count));
  archive.write("best_value", c10::IValue(state.best_value));
  archive.write("best_epoch", c10::IValue(state.best_epoch));
  archive.write("threads", c10::IValue(state.threads));
  archive.write("world_size", c10::IValue(state.world_size));
  archive.write("config", c10::IValue(state.config));
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("rng", generator.get_state());
  }
  // Serialise in memory; only our own checked write touches the disk (LibTorch's stream writer
  // aborts the process on a full disk).
  std::ostringstream buffer;
  archive.save_to(buffer);
  const std::string bytes = buffer.str();
  CheckpointManifest manifest;
  manifest.global_step = state.global_step;
  manifest.config_sha256 = sha256_hex(state.config);
  manifest.wscsl_version = WSCSL_VERSION_STRING;
  manifest.libtorch_version = TORCH_VERSION;
  const std::string sealed = seal_checkpoint(bytes, manifest);
  write_file_atomically(path, {bytes, sealed}, mark);
}

std::filesystem::path newest_verified(const std::vector<std::filesystem::path>& candidates,
                                      std::vector<std::string>& skipped) {
  for (const std::filesystem::path& candidate : candidates) {
    try {
      open_sealed_checkpoint(read_file(candidate), candidate);
      return candidate;
    } catch (const DataError& e) {
      skipped.push_back(e.what());
    }
  }
  throw DataError(skipped.empty()
                      ? std::string("no checkpoint to load")
                      : "no checkpoint verifies: " + fmt::format("{}", fmt::join(skipped, "; ")));
}

TrainingState load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                              torch::optim::Optimizer* optimizer, bool restore_rng,
                              torch::Device device) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "no such checkpoint file");
  const std::string bytes = read_file(path);
  const SealedCheckpoint sealed = open_sealed_checkpoint(bytes, path);
  std::istringstream in(std::string(sealed.archive));
  torch::serialize::InputArchive archive;
  try {
    // Onto the CPU, which every process has, whichever device wrote the tensors.
    archive.load_from(in, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    fail(path, fmt::format("not a wscsl checkpoint or corrupt ({})", e.what_without_backtrace()));
  }
  auto read_value = [&](const char* key) {
    c10::IValue v;
    if (!archive.try_read(key, v)) fail(path, fmt::format("checkpoint has no '{}' entry", key));
    return v;
  };
  if (read_value("format_version").toInt() != kFormatVersion)
    fail(path, fmt::format("checkpoint format {} is not supported (expected {})",
                           read_value("format_version").toInt(), kFormatVersion));
  TrainingState state;
  state.epoch = read_value("epoch").toInt();
  state.step = read_value("step").toInt();
  state.global_step = read_value("global_step").toInt();
  state.epoch_loss_sum = read_value("epoch_loss_sum").to<double>();
  state.epoch_loss_count = read_value("epoch_loss_count").toInt();
  state.best_value = read_value("best_value").to<double>();
  state.best_epoch = read_value("best_epoch").toInt();
  state.threads = read_value("threads").toInt();
  // Checkpoints from before data-parallel training were all written by one process.
  if (c10::IValue world_size; archive.try_read("world_size", world_size))
    state.world_size = world_size.toInt();
  state.config = read_value("config").toStringRef();
  if (state.global_step != sealed.manifest.global_step)
    fail(path, fmt::format("damaged: its manifest says step {}, its archive step {}",
                           sealed.manifest.global_step, state.global_step));
  if (sha256_hex(state.config) != sealed.manifest.config_sha256)
    fail(path, "damaged: the pipeline in its archive is not the one its manifest names");
  try {
    torch::serialize::InputArchive model_archive;
    if (!archive.try_read("model", model_archive)) fail(path, "checkpoint has no model");
    // Reading moves each parameter to the archive's device (the CPU); the model goes back whole.
    model.load(model_archive);
    model.to(device);
    if (optimizer) {
      torch::serialize::InputArchive optimizer_archive;
      if (!archive.try_read("optimizer", optimizer_archive))
        fail(path, "checkpoint has no optimizer state");
      // The pipeline's options (learning rate, momentum, weight decay, betas) stay the
      // optimiser's: LibTorch 2 would take each parameter group's from the archive, 1.13 keeps
      // them, and a resumed run's overrides must apply on both.
      std::vector<std::unique_ptr<torch::optim::OptimizerOptions>> options;
      for (const auto& group : optimizer->param_groups())
        options.push_back(group.options().clone());
      optimizer->load(optimizer_archive);
      for (std::size_t i = 0; i < options.size(); ++i)
        optimizer->param_groups()[i].set_options(std::move(options[i]));
      move_state(*optimizer, device);
    }
  } catch (const c10::Error& e) {
    fail(path, fmt::format("checkpoint does not fit this pipeline's model ({})",
                           e.what_without_backtrace()));
  }
  if (restore_rng) {
    torch::Tensor rng;
    if (!archive.try_read("rng", rng)) fail(path, "checkpoint has no RNG state");
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng);
  }
  return state;
}

}  // namespace wscsl::host
