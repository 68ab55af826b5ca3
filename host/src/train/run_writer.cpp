#include "run_writer.hpp"

#include <cstdio>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "run/curves.hpp"
#include "run/provenance.hpp"
#include "run/results.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/fault_injection.hpp"

namespace wscsl::host {
namespace {

class DirectoryWriter : public RunWriter {
 public:
  DirectoryWriter(const RunDirectory& run, const Pipeline& pipeline, const Placement& placement)
      : run_(run),
        pipeline_(pipeline),
        placement_(placement),
        keep_last_(pipeline.trainer.keep_last) {}

  void warn(const std::string& warning) override {
    fmt::print(stderr, "wscsl: warning: {}\n", warning);
  }
  void write_resolved() override {
    write_file_atomically(run_.resolved(), resolved_toml(pipeline_, placement_));
  }
  void truncate_logs(const TrainingState& checkpoint) override {
    run_.truncate_logs(checkpoint.epoch, checkpoint.global_step);
  }
  void open_steps() override {
    steps_.open(run_.steps(), std::ios::app);
    if (pipeline_.trainer.tensorboard) events_.emplace(run_, pipeline_);
  }
  void log_step(const TrainingState& state, const StepReport& step) override {
    steps_ << fmt::format("{}\t{}\t{}\t{:.9g}\t{:.9g}\n", state.global_step, state.epoch + 1,
                          state.step, step.lr, step.losses.total);
    if (events_) events_->step(state, step);
  }
  void flush_steps() override {
    steps_.flush();
    if (events_) events_->flush();
  }
  void log_epoch(const TrainingState& state,
                 const std::map<std::string, double>& metrics) override {
    std::ofstream(run_.metrics(), std::ios::app) << metrics_line(metrics) << "\n";
    write_training_curves(read_metrics_log(run_.metrics()), run_.curves());
    if (events_) events_->epoch(state, metrics);
  }
  void log_test(const TrainingState& state, const EvaluationResult& test) override {
    if (events_) events_->finish(state, test);
  }
  void log_replicas(std::int64_t epoch, const std::vector<std::string>& digests) override {
    std::ofstream(run_.replicas(), std::ios::app)
        << fmt::format("{}\t{}\n", epoch, fmt::join(digests, "\t"));
  }
  void save_checkpoints(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                        const TrainingState& state, bool best) override {
    if (best) save_checkpoint(run_.checkpoint("best"), model, &optimizer, state);
    run_.rotate_last(keep_last_);
    fault_point(faults::kAfterRotate);
    save_checkpoint(run_.checkpoint("last"), model, &optimizer, state);
  }

 private:
  const RunDirectory& run_;
  const Pipeline& pipeline_;
  Placement placement_;
  std::int64_t keep_last_;
  std::ofstream steps_;
  std::optional<TensorBoardLog> events_;  // while trainer.tensorboard
};

class NoWriter : public RunWriter {
 public:
  void warn(const std::string&) override {}
  void write_resolved() override {}
  void truncate_logs(const TrainingState&) override {}
  void open_steps() override {}
  void log_step(const TrainingState&, const StepReport&) override {}
  void flush_steps() override {}
  void log_epoch(const TrainingState&, const std::map<std::string, double>&) override {}
  void log_test(const TrainingState&, const EvaluationResult&) override {}
  void log_replicas(std::int64_t, const std::vector<std::string>&) override {}
  void save_checkpoints(torch::nn::Module&, torch::optim::Optimizer&, const TrainingState&,
                        bool) override {}
};

}  // namespace

std::unique_ptr<RunWriter> run_writer(const RunDirectory& run, const Pipeline& pipeline,
                                      const Placement& placement, const Communicator& comm) {
  if (comm.is_root()) return std::make_unique<DirectoryWriter>(run, pipeline, placement);
  return std::make_unique<NoWriter>();
}

}  // namespace wscsl::host
