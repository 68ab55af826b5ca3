// What a training run writes into its run directory as it trains — resolved.toml, steps.tsv,
// metrics.jsonl and curves.png, replicas.tsv, the checkpoints — and the warnings about them. In a
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
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"

namespace wscsl::host {

class RunWriter {
 public:
  virtual ~RunWriter() = default;

  // "wscsl: warning: <warning>" on stderr.
  virtual void warn(const std::string& warning) = 0;
  // resolved.toml: `pipeline` as it runs here.
  virtual void write_resolved(const Pipeline& pipeline) = 0;
  // Drops the log lines past `checkpoint`, so that a resumed run appends where it left off.
  virtual void truncate_logs(const TrainingState& checkpoint) = 0;
  // Opens steps.tsv for appending; log_step writes a line, flush_steps makes the lines so far
  // reach the file (before a checkpoint says they happened).
  virtual void open_steps() = 0;
  virtual void log_step(const TrainingState& state, double lr, double loss) = 0;
  virtual void flush_steps() = 0;
  // A metrics.jsonl line, and curves.png redrawn from them all.
  virtual void log_epoch(const std::map<std::string, double>& metrics) = 0;
  // A replicas.tsv line: the digest of each process's parameters after `epoch` (from 1).
  virtual void log_replicas(std::int64_t epoch, const std::vector<std::string>& digests) = 0;
  // `last` (the older ones rotated) and, when `best`, `best`.
  virtual void save_checkpoints(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                const TrainingState& state, bool best) = 0;
};

// The writer of this process of `comm`: rank 0 writes into `run` and keeps `keep_last` `last`
// checkpoints; the other ranks write nothing.
std::unique_ptr<RunWriter> run_writer(const RunDirectory& run, std::int64_t keep_last,
                                      const Communicator& comm);

}  // namespace wscsl::host
