#include "trainer.hpp"

#include <ATen/Parallel.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>

#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "curves.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "results.hpp"
#include "run_evaluation.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/fault_injection.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

// Streams of randomness derived from the run seed, so that data order and augmentation depend
// only on (seed, epoch, step), never on what happened before.
constexpr std::uint64_t kOrderStream = 0x6f72646572;        // "order"
constexpr std::uint64_t kAugmentStream = 0x6175676d656e74;  // "augment"

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainerOptions& o,
                                                        std::vector<torch::Tensor> params) {
  switch (o.optimizer) {
    case OptimizerKind::Sgd:
      return std::make_unique<torch::optim::SGD>(
          params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
    case OptimizerKind::Adam:
      return std::make_unique<torch::optim::Adam>(
          params,
          torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).weight_decay(o.weight_decay));
  }
  throw Error("internal: unknown optimizer");
}

bool finite(const torch::Tensor& t) {
  return !t.defined() || torch::isfinite(t).all().item<bool>();
}

// The name of the first parameter, buffer or optimiser state that is not finite, or empty.
std::string first_non_finite(const torch::nn::Module& model,
                             const torch::optim::Optimizer& optimizer) {
  for (const auto& p : model.named_parameters())
    if (!finite(p.value())) return fmt::format("parameter '{}'", p.key());
  for (const auto& b : model.named_buffers())
    if (!finite(b.value())) return fmt::format("buffer '{}'", b.key());
  for (const auto& [key, state] : optimizer.state()) {
    (void)key;
    if (const auto* adam = dynamic_cast<const torch::optim::AdamParamState*>(state.get())) {
      if (!finite(adam->exp_avg()) || !finite(adam->exp_avg_sq()) ||
          !finite(adam->max_exp_avg_sq()))
        return "the optimiser's Adam moments";
    } else if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(state.get())) {
      if (!finite(sgd->momentum_buffer())) return "the optimiser's momentum";
    }
  }
  return {};
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    group.options().set_lr(lr);
}

std::vector<std::int64_t> epoch_order(std::int64_t count, std::int64_t seed, std::int64_t epoch) {
  return seeded_permutation(mix_seed(mix_seed(static_cast<std::uint64_t>(seed), kOrderStream),
                                     static_cast<std::uint64_t>(epoch)),
                            count);
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

class Loop {
 public:
  Loop(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request)
      : p_(pipeline), o_(pipeline.trainer), run_(run), request_(request), model_(pipeline.model()) {
    model_->to(device_);  // before the optimiser holds the parameters and creates its state
    std::vector<torch::Tensor> params;
    for (const torch::Tensor& t : model_->parameters())
      if (t.requires_grad()) params.push_back(t);
    if (params.empty()) throw Error("the pipeline has no trainable parameters");
    optimizer_ = make_optimizer(o_, params);
  }

  TrainResult run() {
    start();
    const SplitData& train = p_.dataset->split("train");
    const std::int64_t count = train.triplets.size(0);
    const std::int64_t steps =
        o_.drop_last ? count / o_.batch_size : (count + o_.batch_size - 1) / o_.batch_size;
    if (steps == 0)
      throw Error(fmt::format("the training split has {} triplets, fewer than one batch of {}",
                              count, o_.batch_size));
    const bool conditioned = p_.condition_module->supervision() == Supervision::Conditioned;
    if (conditioned && !train.conditions.defined())
      throw Error(fmt::format("{} trains with triplet conditions, and the training split has none",
                              p_.condition_module->label()));
    std::ofstream steps_log(run_.steps(), std::ios::app);
    TrainResult result;
    while (state_.epoch < o_.epochs) {
      const double lr = o_.lr_at(state_.epoch);
      set_lr(*optimizer_, lr);
      const auto order = epoch_order(count, o_.seed, state_.epoch);
      model_->train();
      const auto epoch_start = std::chrono::steady_clock::now();
      Progress progress(fmt::format("epoch {}/{}", state_.epoch + 1, o_.epochs), steps, state_.step,
                        o_.log_every, request_.out);
      while (state_.step < steps) {
        const std::int64_t begin = state_.step * o_.batch_size;
        const std::int64_t end = std::min(count, begin + o_.batch_size);
        const torch::Tensor rows = torch::from_blob(const_cast<std::int64_t*>(order.data()) + begin,
                                                    {end - begin}, torch::kLong)
                                       .clone();
        const double loss = step(train, rows, conditioned);
        ++state_.step;
        ++state_.global_step;
        steps_log << fmt::format("{}\t{}\t{}\t{:.9g}\t{:.9g}\n", state_.global_step,
                                 state_.epoch + 1, state_.step, lr, loss);
        progress.update(state_.step, loss);
        const bool stop_now = g_stop_requested || (request_.stop_after_steps > 0 &&
                                                   state_.global_step >= request_.stop_after_steps);
        const bool periodic =
            o_.checkpoint_every > 0 && state_.global_step % o_.checkpoint_every == 0;
        if (stop_now || periodic) {
          steps_log.flush();
          commit(false);
        }
        if (stop_now) {
          progress.finish(fmt::format(
              "stopped after step {} (epoch {}, step {}/{}); resume with "
              "`wscsl train --resume {}`",
              state_.global_step, state_.epoch + 1, state_.step, steps, run_.root().string()));
          result.outcome = g_stop_requested ? TrainOutcome::Interrupted : TrainOutcome::Stopped;
          result.state = state_;
          return result;
        }
      }
      steps_log.flush();
      finish_epoch(progress, lr, epoch_start);
    }
    result.state = state_;
    if (o_.evaluate_after) result.test = evaluate_run(p_, run_, checkpoint_for_evaluation(run_));
    return result;
  }

 private:
  void start() {
    at::set_num_threads(o_.resolved_threads());
    state_.threads = o_.resolved_threads();
    state_.config = to_toml(p_.resolved);
    if (!request_.resume) {
      write_file_atomically(run_.resolved(), resolved_toml(p_));
      return;
    }
    std::vector<std::string> skipped;
    const fs::path from = newest_verified(run_.last_checkpoints(), skipped);
    for (const std::string& reason : skipped)
      fmt::print(stderr, "wscsl: warning: skipped {}\n", reason);
    const TrainingState saved = load_checkpoint(from, *model_, optimizer_.get(), true, device_);
    if (saved.threads != state_.threads)
      fmt::print(stderr,
                 "wscsl: warning: the run used {} threads and now {}; the resumed losses will not "
                 "match an uninterrupted run bit for bit\n",
                 saved.threads, state_.threads);
    if (saved.config != state_.config) {
      fmt::print(stderr,
                 "wscsl: warning: the pipeline differs from the one the checkpoint was trained "
                 "with; {} now records the new one\n",
                 run_.resolved().string());
      write_file_atomically(run_.resolved(), resolved_toml(p_));
    }
    const std::string config = state_.config;
    state_ = saved;
    state_.threads = o_.resolved_threads();
    state_.config = config;
    run_.truncate_logs(state_.epoch, state_.global_step);
    fmt::print(request_.out, "resuming {} at epoch {}, step {} (global step {}){}\n",
               run_.root().string(), state_.epoch + 1, state_.step, state_.global_step,
               skipped.empty() ? "" : " from " + from.filename().string());
  }

  double step(const SplitData& train, const torch::Tensor& rows, bool conditioned) {
    const torch::Tensor triplets = train.triplets.index_select(0, rows);
    const std::int64_t b = rows.size(0);
    const ImageRequest request{
        true, mix_seed(mix_seed(static_cast<std::uint64_t>(o_.seed), kAugmentStream),
                       static_cast<std::uint64_t>(state_.global_step))};
    const torch::Tensor images =
        p_.dataset->images("train", triplets.t().reshape({-1}), request).to(device_);
    const TripletImages roles{images.narrow(0, 0, b), images.narrow(0, b, b),
                              images.narrow(0, 2 * b, b)};
    TripletInput in;
    // One backbone call per role, so batch-norm statistics are per role as in the reference code.
    in.phi_anchor = p_.backbone->embed(roles.anchor);
    in.phi_close = p_.backbone->embed(roles.close);
    in.phi_far = p_.backbone->embed(roles.far);
    in.psi_anchor = p_.condition_module->embed(in.phi_anchor);
    in.psi_close = p_.condition_module->embed(in.phi_close);
    in.psi_far = p_.condition_module->embed(in.phi_far);
    if (conditioned) in.conditions = train.conditions.index_select(0, rows).to(device_);
    const TripletScores scores = p_.condition_module->score(in);
    std::optional<TripletScores> reversed;
    if (p_.losses_need(Resource::ReversedScores)) {
      torch::NoGradGuard no_grad;
      reversed = p_.condition_module->score(in.reversed());
    }
    torch::Tensor total;
    for (const WeightedLoss& l : p_.losses) {
      // Each loss gets what its contract needs and nothing more.
      const Contract& needs = l.loss->contract();
      const LossInput loss_input{
          in, scores, needs.needs_resource(Resource::ReversedScores) ? &*reversed : nullptr,
          needs.needs_resource(Resource::TrainingImages) ? &roles : nullptr};
      for (const auto& [name, value] : l.loss->compute(loss_input)) {
        const torch::Tensor weighted = value.reshape({}) * l.weight;
        total = total.defined() ? total + weighted : weighted;
      }
    }
    const double loss = total.item<double>();
    if (!std::isfinite(loss))
      throw Error(
          fmt::format("the loss became {} at epoch {}, step {}; the last checkpoint in {} "
                      "is kept (lower trainer.lr or check the data)",
                      loss, state_.epoch + 1, state_.step + 1, run_.root().string()));
    optimizer_->zero_grad();
    total.backward();
    optimizer_->step();
    state_.epoch_loss_sum += loss;
    ++state_.epoch_loss_count;
    return loss;
  }

  void finish_epoch(Progress& progress, double lr,
                    std::chrono::steady_clock::time_point epoch_start) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    std::map<std::string, double> line = {
        {"epoch", static_cast<double>(state_.epoch + 1)},
        {"lr", lr},
        {"loss", state_.epoch_loss_count ? state_.epoch_loss_sum / state_.epoch_loss_count : NAN},
        {"seconds", seconds}};
    std::optional<EvaluationResult> validation;
    bool best = false;
    if (o_.validate && !p_.evaluators.empty()) {
      const EmbeddingTable val = embed_split(p_, "val", o_.eval_batch_size);
      validation = evaluate(p_, val, val, false, {});
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
    std::ofstream(run_.metrics(), std::ios::app) << metrics_line(line) << "\n";
    write_training_curves(read_metrics_log(run_.metrics()), run_.curves());
    state_.epoch += 1;
    state_.step = 0;
    state_.epoch_loss_sum = 0;
    state_.epoch_loss_count = 0;
    commit(best);
  }

  // Writes `best` (when `best`) and `last`. A checkpoint is never committed with weights or
  // optimiser state that are not finite: the run stops, and the checkpoints already written stay
  // as they are.
  void commit(bool best) {
    const std::string broken = first_non_finite(*model_, *optimizer_);
    if (!broken.empty())
      throw Error(
          fmt::format("{} is not finite after step {} (global); no checkpoint was "
                      "written, those already in {} are kept (lower trainer.lr or "
                      "trainer.weight_decay)",
                      broken, state_.global_step, run_.root().string()));
    if (best) save_checkpoint(run_.checkpoint("best"), *model_, optimizer_.get(), state_);
    run_.rotate_last(o_.keep_last);
    fault_point(faults::kAfterRotate);
    save_checkpoint(run_.checkpoint("last"), *model_, optimizer_.get(), state_);
  }

  Pipeline& p_;
  const TrainerOptions& o_;
  const RunDirectory& run_;
  TrainRequest request_;
  std::shared_ptr<torch::nn::Module> model_;
  torch::Device device_ = o_.resolved_device();
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  TrainingState state_;
};

}  // namespace

void request_stop() {
  g_stop_requested = 1;
}

bool stop_requested() {
  return g_stop_requested != 0;
}

TrainResult train(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request) {
  return Loop(pipeline, run, request).run();
}

}  // namespace wscsl::host
