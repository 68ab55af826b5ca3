#include "checkpointing.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"

namespace wscsl::host {

Checkpointing::Checkpointing(const Pipeline& pipeline, const RunDirectory& run, RunWriter& writer,
                             TrainingModel& model)
    : pipeline_(pipeline), run_(run), writer_(writer), model_(model) {}

TrainingState Checkpointing::start(bool resume, const Placement& placement, std::FILE* out) {
  TrainingState now;
  now.threads = placement.threads;
  now.world_size = placement.processes;
  now.config = to_toml(pipeline_.resolved);
  if (!resume) {
    writer_.write_resolved();
    return now;
  }
  std::vector<std::string> skipped;
  const std::filesystem::path from = newest_verified(run_.last_checkpoints(), skipped);
  for (const std::string& reason : skipped)
    writer_.warn("skipped " + reason);
  TrainingState saved =
      load_checkpoint(from, model_.module(), &model_.optimizer(), true, model_.device());
  if (saved.world_size != now.world_size)
    writer_.warn(fmt::format(
        "the run was trained by {} process{} and continues with {}; the data order is the "
        "same, the losses differ in float summation order and per-process batch-norm statistics",
        saved.world_size, saved.world_size == 1 ? "" : "es", now.world_size));
  if (saved.threads != now.threads)
    writer_.warn(
        fmt::format("the run used {} threads and now {}; the resumed losses will not match an "
                    "uninterrupted run bit for bit",
                    saved.threads, now.threads));
  if (saved.config != now.config) {
    writer_.warn(
        fmt::format("the pipeline differs from the one the checkpoint was trained with; {} now "
                    "records the new one",
                    run_.resolved().string()));
    writer_.write_resolved();
  }
  saved.threads = now.threads;
  saved.world_size = now.world_size;
  saved.config = now.config;
  writer_.truncate_logs(saved);
  fmt::print(out, "resuming {} at epoch {}, step {} (global step {}){}\n", run_.root().string(),
             saved.epoch + 1, saved.step, saved.global_step,
             skipped.empty() ? "" : " from " + from.filename().string());
  return saved;
}

void Checkpointing::commit(const TrainingState& state, bool best) {
  const std::string broken = model_.first_non_finite();
  if (!broken.empty())
    throw Error(
        fmt::format("{} is not finite after step {} (global); no checkpoint was written, those "
                    "already in {} are kept (lower trainer.lr or trainer.weight_decay)",
                    broken, state.global_step, run_.root().string()));
  writer_.save_checkpoints(model_.module(), model_.optimizer(), state, best);
}

}  // namespace wscsl::host
