// What a training run writes into its run directory as it trains — resolved.toml, steps.tsv,
// metrics.jsonl and curves.png, replicas.tsv, the checkpoints, TensorBoard's event files — and the
// warnings about them. In a
// data-parallel job rank 0 alone writes: every other process gets a writer that does nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include "distributed/communicator.hpp"
#include "distributed/placement.hpp"
#include "evaluation/evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"
#include "tensorboard_log.hpp"

namespace wscsl::host {

class RunWriter {
 public:
  virtual ~RunWriter() = default;

  // "wscsl: warning: <warning>" on stderr.
  virtual void warn(const std::string& warning) = 0;
  // resolved.toml: the pipeline as it runs here, and where.
  virtual void write_resolved() = 0;
  // Drops the log lines past `checkpoint`, so that a resumed run appends where it left off.
  virtual void truncate_logs(const TrainingState& checkpoint) = 0;
  // Opens steps.tsv for appending and starts a new event file; log_step writes a line (and, every
  // trainer.log_every steps, the training scalars), flush_steps makes what was logged so far
  // reach the files (before a checkpoint says it happened).
  virtual void open_steps() = 0;
  virtual void log_step(const TrainingState& state, const StepReport& step) = 0;
  virtual void flush_steps() = 0;
  // A metrics.jsonl line, curves.png redrawn from them all, and the epoch's scalars.
  virtual void log_epoch(const TrainingState& state,
                         const std::map<std::string, double>& metrics) = 0;
  // The test metrics and the run's pictures, after training.
  virtual void log_test(const TrainingState& state, const EvaluationResult& test) = 0;
  // A replicas.tsv line: the digest of each process's parameters after `epoch` (from 1).
  virtual void log_replicas(std::int64_t epoch, const std::vector<std::string>& digests) = 0;
  // `last` (the older ones rotated) and, when `best`, `best`.
  virtual void save_checkpoints(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                const TrainingState& state, bool best) = 0;
};

// The writer of this process of `comm`: rank 0 writes into `run` as `pipeline`'s trainer says
// (trainer.keep_last `last` checkpoints, event files when trainer.tensorboard), recording where
// the run computes (`placement`); the other ranks write nothing.
std::unique_ptr<RunWriter> run_writer(const RunDirectory& run, const Pipeline& pipeline,
                                      const Placement& placement, const Communicator& comm);

}  // namespace wscsl::host
