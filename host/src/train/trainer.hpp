// The training loop: seeded, resumable bit for bit, with validation and best-model selection.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>

#include "distributed/strategy.hpp"
#include "evaluation/evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"

namespace wscsl::host {

struct TrainRequest {
  bool resume = false;                // continue from run_directory's last checkpoint
  std::int64_t stop_after_steps = 0;  // stop (as if interrupted) after this global step; 0: never
  std::FILE* out = stdout;            // progress and summaries
};

enum class TrainOutcome { Finished, Stopped, Interrupted };

struct TrainResult {
  TrainOutcome outcome = TrainOutcome::Finished;
  TrainingState state;
  std::optional<EvaluationResult> test;  // the final evaluation, when the run finished
};

// Trains `pipeline` in `run` as this process of the job `strategy` joined. A stop
// (stop_after_steps or a signal) writes the `last` checkpoint and returns; `--resume` then
// continues exactly where it stopped. With several processes, each trains on its share of every
// batch with the data order of one process; rank 0 alone writes into `run`, and only rank 0's
// result holds the test evaluation.
TrainResult train(Pipeline& pipeline, const Strategy& strategy, const RunDirectory& run,
                  const TrainRequest& request);
// One process, placed as [trainer] says, on the placement's threads.
TrainResult train(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request);

// Asks a running train() to checkpoint and return at the next step boundary (signal-safe).
void request_stop();
// Whether a stop was requested.
bool stop_requested();
// SIGINT and SIGTERM ask a running training to checkpoint and stop; a second one ends the process.
void install_stop_handlers();

}  // namespace wscsl::host
