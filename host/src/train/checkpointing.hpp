// Where a training run starts and what it commits. A new run starts at step 0; a resumed one from
// the newest `last` checkpoint that verifies, with the model, the optimiser, the random state and
// the loop position it holds. A checkpoint is committed only with finite weights.
#pragma once

#include <cstdint>
#include <cstdio>

#include "distributed/placement.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"
#include "run_writer.hpp"
#include "training_model.hpp"

namespace wscsl::host {

class Checkpointing {
 public:
  Checkpointing(const Pipeline& pipeline, const RunDirectory& run, RunWriter& writer,
                TrainingModel& model);

  // The state this process, placed at `placement`, trains from: step 0 of a new run (whose
  // resolved.toml is written), or, when `resume`, the newest checkpoint's, said on `out`. What
  // differs from the checkpoint (processes, threads, the pipeline) is warned about; the logs are
  // cut back to it.
  TrainingState start(bool resume, const Placement& placement, std::FILE* out);

  // Commits `state` as `last` and, when `best`, as `best`. Weights or optimiser state that are not
  // finite stop the run instead, and the checkpoints already written stay as they are.
  void commit(const TrainingState& state, bool best);

 private:
  const Pipeline& pipeline_;
  const RunDirectory& run_;
  RunWriter& writer_;
  TrainingModel& model_;
};

}  // namespace wscsl::host
