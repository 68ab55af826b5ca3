#include "run_writer.hpp"

#include <cstdio>
#include <fstream>

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
  DirectoryWriter(const RunDirectory& run, std::int64_t keep_last)
      : run_(run), keep_last_(keep_last) {}

  void warn(const std::string& warning) override {
    fmt::print(stderr, "wscsl: warning: {}\n", warning);
  }
  void write_resolved(const Pipeline& pipeline) override {
    write_file_atomically(run_.resolved(), resolved_toml(pipeline));
  }
  void truncate_logs(const TrainingState& checkpoint) override {
    run_.truncate_logs(checkpoint.epoch, checkpoint.global_step);
  }
  void open_steps() override { steps_.open(run_.steps(), std::ios::app); }
  void log_step(const TrainingState& state, double lr, double loss) override {
    steps_ << fmt::format("{}\t{}\t{}\t{:.9g}\t{:.9g}\n", state.global_step, state.epoch + 1,
                          state.step, lr, loss);
  }
  void flush_steps() override { steps_.flush(); }
  void log_epoch(const std::map<std::string, double>& metrics) override {
    std::ofstream(run_.metrics(), std::ios::app) << metrics_line(metrics) << "\n";
    write_training_curves(read_metrics_log(run_.metrics()), run_.curves());
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
  std::int64_t keep_last_;
  std::ofstream steps_;
};

class NoWriter : public RunWriter {
 public:
  void warn(const std::string&) override {}
  void write_resolved(const Pipeline&) override {}
  void truncate_logs(const TrainingState&) override {}
  void open_steps() override {}
  void log_step(const TrainingState&, double, double) override {}
  void flush_steps() override {}
  void log_epoch(const std::map<std::string, double>&) override {}
  void log_replicas(std::int64_t, const std::vector<std::string>&) override {}
  void save_checkpoints(torch::nn::Module&, torch::optim::Optimizer&, const TrainingState&,
                        bool) override {}
};

}  // namespace

std::unique_ptr<RunWriter> run_writer(const RunDirectory& run, std::int64_t keep_last,
                                      const Communicator& comm) {
  if (comm.is_root()) return std::make_unique<DirectoryWriter>(run, keep_last);
  return std::make_unique<NoWriter>();
}

}  // namespace wscsl::host
