// Data parallelism around the training step: every process of a job takes an equal share of each
// batch, and their gradients are averaged while backward runs (DDP's Reducer, through the
// Communicator), so that each takes the step of the whole batch and all hold one model. Rank 0's
// parameters start every process, and validation and the final evaluation embed shares of the
// images and gather them. With one process every collective does nothing and a share is the whole
// batch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "distributed/strategy.hpp"
#include "evaluation/evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"
#include "run_writer.hpp"
#include "training_data.hpp"
#include "training_model.hpp"
#include "training_step.hpp"
#include "wscsl/nn/batch_norm.hpp"

namespace wscsl::host {

struct StepOutcome {
  StepLosses losses;            // of the whole batch
  bool stop_requested = false;  // by any process
};

class DataParallel {
 public:
  // Joins `model` to the job of `strategy`: rank 0's parameters and buffers go to every process,
  // and the gradients of its trainable parameters are averaged from now on (batch-norm statistics
  // too, with `sync_batch_norm`). Throws Error when a batch of `smallest_batch` triplets leaves a
  // process without any.
  DataParallel(const Strategy& strategy, TrainingModel& model, std::int64_t smallest_batch,
               bool sync_batch_norm);

  // One step of `training_step` on this process's shard `batch` of a batch (`share` says which):
  // the whole batch's loss, and whether `stop_requested` (asked when backward starts) held in any
  // process.
  StepOutcome step(TrainingStep& training_step, const TripletBatch& batch, const Shard& share,
                   const std::function<bool()>& stop_requested);

  // Runs `take_step`, the step after `at`. With several processes a failure names this rank and the
  // step: the others stop too, and every log says where the job broke.
  StepOutcome naming_failures(const TrainingState& at,
                              const std::function<StepOutcome()>& take_step) const;

  // The validation metrics of the model: rank 0's batch-norm statistics go to every process, each
  // embeds its share of the images, and rank 0 evaluates (the other ranks return nothing).
  std::optional<EvaluationResult> validate(Pipeline& pipeline);

  // The final evaluation of `run`'s checkpoint, which rank 0 chooses and returns.
  std::optional<EvaluationResult> final_evaluation(Pipeline& pipeline,
                                                   const RunDirectory& run) const;

  // With several processes, the digest of each one's parameters after `epoch` (from 0) goes to
  // `writer`; processes that differ stop the run.
  void check_replicas(std::int64_t epoch, RunWriter& writer) const;

  // The command that continues `run` under the launcher of this job (launchers.hpp).
  std::string resume_command(const std::string& run) const;

 private:
  const Strategy& strategy_;
  TrainingModel& model_;
  std::unique_ptr<GradientAverager> averager_;
  std::optional<nn::SynchronisedBatchNorm> synchronised_;
};

}  // namespace wscsl::host
