#include "trainer.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "checkpointing.hpp"
#include "data_parallel.hpp"
#include "device_check.hpp"
#include "progress.hpp"
#include "run_writer.hpp"
#include "training_data.hpp"
#include "training_model.hpp"
#include "training_step.hpp"
#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void on_stop_signal(int) {
  g_stop_requested = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
  std::signal(SIGTERM, SIG_DFL);
}

std::string epoch_summary(std::int64_t epoch, std::int64_t epochs, double loss, double lr,
                          double seconds, const EvaluationResult* validation,
                          const TrainerOptions& o, bool best) {
  std::string s = fmt::format("epoch {}/{}: loss {:.4f}, lr {:.3g}, {:.1f} s", epoch + 1, epochs,
                              loss, lr, seconds);
  if (validation) {
    if (const NamedMetric* m =
            o.select_metric.empty() ? nullptr : validation->find(o.select_metric))
      s += fmt::format("; val {} {:.4f}{}", m->name, m->value, best ? " (best)" : "");
    else if (!validation->metrics.empty())
      s += fmt::format("; val {} {:.4f}", validation->metrics.front().name,
                       validation->metrics.front().value);
  }
  return s;
}

// Whether every tensor of the pipeline's model is on `device`: true, else throws
// (device_check.hpp).
bool on_device(const Pipeline& pipeline, torch::Device device) {
  require_on_device(model_components(pipeline), device);
  return true;
}

// The epochs of a run: its collaborators are made in the order the run needs them — the model on
// its device, where the run starts (writing or reading the run directory), the checks of the
// data, then the other processes of the job.
class Loop {
 public:
  Loop(Pipeline& pipeline, const Strategy& strategy, const RunDirectory& run,
       const TrainRequest& request)
      : p_(pipeline),
        o_(pipeline.trainer),
        run_(run),
        request_(request),
        model_(pipeline, strategy.device()),
        writer_(run_writer(run, pipeline, strategy.placement(), strategy.comm())),
        checkpoints_(pipeline, run, *writer_, model_),
        state_(checkpoints_.start(request.resume, strategy.placement(), request.out)),
        model_on_device_(on_device(pipeline, model_.device())),
        data_(pipeline, strategy.placement(), strategy.rank()),
        parallel_(strategy, model_, data_.last_batch_size(), o_.sync_batch_norm),
        step_(pipeline, model_.optimizer(), strategy.precision()) {}

  TrainResult run() {
    writer_->open_steps();
    TrainResult result;
    while (state_.epoch < o_.epochs) {
      const double lr = o_.lr_at(state_.epoch);
      model_.set_epoch(state_.epoch);
      data_.start_epoch(state_.epoch);
      model_.module().train();
      const auto epoch_start = std::chrono::steady_clock::now();
      epoch_data_seconds_ = 0;
      const std::int64_t steps = data_.steps_per_epoch();
      Progress progress(fmt::format("epoch {}/{}", state_.epoch + 1, o_.epochs), steps, state_.step,
                        o_.log_every, request_.out);
      while (state_.step < steps) {
        const auto step_start = std::chrono::steady_clock::now();
        std::int64_t triplets = 0;
        const StepOutcome outcome = step(triplets);
        const double step_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
        ++state_.step;
        ++state_.global_step;
        writer_->log_step(state_, {lr, outcome.losses, triplets, step_seconds});
        progress.update(state_.step, outcome.losses.total);
        const bool stop_now =
            outcome.stop_requested ||
            (request_.stop_after_steps > 0 && state_.global_step >= request_.stop_after_steps);
        const bool periodic =
            o_.checkpoint_every > 0 && state_.global_step % o_.checkpoint_every == 0;
        if (stop_now || periodic) {
          writer_->flush_steps();
          checkpoints_.commit(state_, false);
        }
        if (stop_now) {
          progress.finish(
              fmt::format("stopped after step {} (epoch {}, step {}/{}); resume with `{}`",
                          state_.global_step, state_.epoch + 1, state_.step, steps,
                          parallel_.resume_command(run_.root().string())));
          result.outcome =
              outcome.stop_requested ? TrainOutcome::Interrupted : TrainOutcome::Stopped;
          result.state = state_;
          return result;
        }
      }
      writer_->flush_steps();
      finish_epoch(progress, lr, epoch_start);
    }
    result.state = state_;
    if (o_.evaluate_after) result.test = parallel_.final_evaluation(p_, run_);
    if (result.test) writer_->log_test(state_, *result.test);
    return result;
  }

 private:
  // The step on this process's share of the epoch's batch state_.step; `triplets` is set to the
  // whole batch's.
  StepOutcome step(std::int64_t& triplets) {
    return parallel_.naming_failures(state_, [&] {
      const auto wait_start = std::chrono::steady_clock::now();
      const ShardBatch shard = data_.batch(state_.step, state_.global_step);
      epoch_data_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
      if (!batch_checked_) {
        require_on_device(shard.batch, model_.device());
        batch_checked_ = true;
      }
      triplets = shard.share.total;
      const StepOutcome outcome = parallel_.step(step_, shard.batch, shard.share, stop_requested);
      const double loss = outcome.losses.total;
      if (!std::isfinite(loss))
        throw Error(
            fmt::format("the loss became {} at epoch {}, step {}; the last checkpoint in {} "
                        "is kept (lower trainer.lr or check the data)",
                        loss, state_.epoch + 1, state_.step + 1, run_.root().string()));
      state_.epoch_loss_sum += loss;
      ++state_.epoch_loss_count;
      return outcome;
    });
  }

  void finish_epoch(Progress& progress, double lr,
                    std::chrono::steady_clock::time_point epoch_start) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    std::map<std::string, double> line = {
        {"epoch", static_cast<double>(state_.epoch + 1)},
        {"lr", lr},
        {"loss", state_.epoch_loss_count ? state_.epoch_loss_sum / state_.epoch_loss_count : NAN},
        {"seconds", seconds},
        {"data_seconds", epoch_data_seconds_}};
    std::optional<EvaluationResult> validation;
    bool best = false;
    if (o_.validate && !p_.evaluators.empty()) validation = parallel_.validate(p_);
    if (validation) {
      for (const NamedMetric& m : validation->metrics)
        line["val/" + m.name] = m.value;
      if (!o_.select_metric.empty()) {
        const NamedMetric* m = validation->find(o_.select_metric);
        if (!m)
          throw Error(
              fmt::format("trainer.select_metric \"{}\" is not among the validation "
                          "metrics",
                          o_.select_metric));
        best = o_.improves(m->value, state_.best_value);
        if (best) state_.best_value = m->value, state_.best_epoch = state_.epoch;
      }
    }
    progress.finish(epoch_summary(state_.epoch, o_.epochs, line["loss"], lr, seconds,
                                  validation ? &*validation : nullptr, o_, best));
    parallel_.check_replicas(state_.epoch, *writer_);
    writer_->log_epoch(state_, line);
    state_.epoch += 1;
    state_.step = 0;
    state_.epoch_loss_sum = 0;
    state_.epoch_loss_count = 0;
    checkpoints_.commit(state_, best);
  }

  Pipeline& p_;
  const TrainerOptions& o_;
  const RunDirectory& run_;
  TrainRequest request_;
  TrainingModel model_;
  std::unique_ptr<RunWriter> writer_;
  Checkpointing checkpoints_;
  TrainingState state_;
  // The model is on its device, a checkpoint's tensors included, before the processes exchange
  // parameters.
  [[maybe_unused]] const bool model_on_device_;
  TrainingData data_;
  DataParallel parallel_;
  TrainingStep step_;
  bool batch_checked_ = false;  // the first batch of this process is on the model's device
  // The part of this epoch's seconds (of this session, when it resumed within the epoch) that the
  // steps waited for their batch to be read and queued to the device.
  double epoch_data_seconds_ = 0;
};

}  // namespace

void request_stop() {
  g_stop_requested = 1;
}

bool stop_requested() {
  return g_stop_requested != 0;
}

void install_stop_handlers() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

TrainResult train(Pipeline& pipeline, const Strategy& strategy, const RunDirectory& run,
                  const TrainRequest& request) {
  return Loop(pipeline, strategy, run, request).run();
}

TrainResult train(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request) {
  return train(pipeline, Strategy(pipeline.trainer, World{}), run, request);
}

}  // namespace wscsl::host
