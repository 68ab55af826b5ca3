// What a training run shows in TensorBoard (trainer.tensorboard): every `trainer.log_every` steps
// that step's loss and loss terms and learning rate, and the throughput since the last such
// point (so that a resumed run logs what an uninterrupted one would, but for the speed); each
// epoch's metrics; the test metrics and the run's pictures at the end; the resolved pipeline's
// options as the HParams tab's hyperparameters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evaluation/evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/event_log.hpp"
#include "run/run_directory.hpp"
#include "training_step.hpp"

namespace wscsl::host {

// What one step reports to the run's logs.
struct StepReport {
  double lr = 0.0;
  StepLosses losses;
  std::int64_t triplets = 0;  // in the whole batch
  double seconds = 0.0;       // reading the batch and the step
};

// The resolved pipeline's options as hyperparameters: "trainer.lr", "losses.0.margin", … (arrays
// of values as their TOML text).
std::map<std::string, HParamValue> pipeline_hparams(const ConfigNode& resolved);

// The HParams group of runs whose options differ at most in trainer.seed.
std::string hparams_group(const std::map<std::string, HParamValue>& hparams);

class TensorBoardLog {
 public:
  // Starts a new event file in `run` with the session's hyperparameters.
  TensorBoardLog(const RunDirectory& run, const Pipeline& pipeline);

  void step(const TrainingState& state, const StepReport& report);
  // `metrics` as metrics.jsonl has them: epoch, lr, loss, seconds, val/….
  void epoch(const TrainingState& state, const std::map<std::string, double>& metrics);
  // The test metrics, curves.png and the evaluators' PNG pictures; the session ends.
  void finish(const TrainingState& state, const EvaluationResult& test);
  void flush() { log_.flush(); }

 private:
  const RunDirectory& run_;
  std::int64_t log_every_;
  EventLog log_;
  // Since the last logged step.
  std::int64_t steps_ = 0, triplets_ = 0;
  double seconds_ = 0.0;
};

}  // namespace wscsl::host
