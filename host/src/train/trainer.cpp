#include "trainer.hpp"

#include <ATen/Parallel.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <functional>
#include <optional>

#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "distributed/communicator.hpp"
#include "evaluation/run_evaluation.hpp"
#include "pipeline/triplet_step.hpp"
#include "progress.hpp"
#include "run/curves.hpp"
#include "run/provenance.hpp"
#include "run/results.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/nn/batch_norm.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"
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
  Loop(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request,
       const Communicator& comm)
      : p_(pipeline),
        o_(pipeline.trainer),
        run_(run),
        request_(request),
        comm_(comm),
        model_(pipeline.model()) {
    model_->to(device_);  // before the optimiser holds the parameters and creates its state
    for (const auto& t : model_->named_parameters())
      if (t.value().requires_grad()) {
        params_.push_back(t.value());
        param_names_.push_back(t.key());
      }
    if (params_.empty()) throw Error("the pipeline has no trainable parameters");
    optimizer_ = make_optimizer(o_, params_);
  }

  TrainResult run() {
    start();
    const SplitData& train = p_.dataset->split("train");
    const std::int64_t count = train.triplets.size(0);
    const std::int64_t steps =
        o_.drop_last ? count / o_.batch_size : (count + o_.batch_size - 1) / o_.batch_size;
    if (o_.batch_size > count)
      throw Error(
          fmt::format("trainer.batch_size = {} is larger than the training split, which "
                      "holds {} triplets",
                      o_.batch_size, count));
    const bool conditioned = p_.condition_module->supervision() == Supervision::Conditioned;
    if (conditioned && !train.conditions.defined())
      throw Error(fmt::format("{} trains with triplet conditions, and the training split has none",
                              p_.condition_module->label()));
    const std::int64_t last_batch = count - (steps - 1) * o_.batch_size;
    if (last_batch < comm_.size())
      throw Error(fmt::format(
          "the last batch of an epoch holds {} triplet{}, fewer than the {} processes that share "
          "it (set trainer.drop_last = true)",
          last_batch, last_batch == 1 ? "" : "s", comm_.size()));
    if (comm_.size() > 1) {
      comm_.broadcast(model_state(*model_));
      averager_ = comm_.gradient_averager(params_, param_names_);
      if (o_.sync_batch_norm) synchronised_.emplace([this](at::Tensor& t) { comm_.sum(t); });
    }
    std::ofstream steps_log;
    if (comm_.is_root()) steps_log.open(run_.steps(), std::ios::app);
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
        const StepOutcome outcome = distributed_step(train, rows, conditioned);
        const double loss = outcome.loss;
        ++state_.step;
        ++state_.global_step;
        if (comm_.is_root())
          steps_log << fmt::format("{}\t{}\t{}\t{:.9g}\t{:.9g}\n", state_.global_step,
                                   state_.epoch + 1, state_.step, lr, loss);
        progress.update(state_.step, loss);
        const bool stop_now =
            outcome.stop_requested ||
            (request_.stop_after_steps > 0 && state_.global_step >= request_.stop_after_steps);
        const bool periodic =
            o_.checkpoint_every > 0 && state_.global_step % o_.checkpoint_every == 0;
        if (stop_now || periodic) {
          steps_log.flush();
          commit(false);
        }
        if (stop_now) {
          progress.finish(fmt::format(
              "stopped after step {} (epoch {}, step {}/{}); resume with "
              "`wscsl train --resume {}{}`",
              state_.global_step, state_.epoch + 1, state_.step, steps, run_.root().string(),
              comm_.size() > 1 ? fmt::format(" --nproc {}", comm_.size()) : ""));
          result.outcome =
              outcome.stop_requested ? TrainOutcome::Interrupted : TrainOutcome::Stopped;
          result.state = state_;
          return result;
        }
      }
      steps_log.flush();
      finish_epoch(progress, lr, epoch_start);
    }
    result.state = state_;
    if (o_.evaluate_after) {
      const std::filesystem::path best =
          comm_.is_root() ? checkpoint_for_evaluation(run_) : std::filesystem::path();
      result.test = evaluate_run(p_, run_, best, comm_);
    }
    return result;
  }

 private:
  void start() {
    at::set_num_threads(o_.resolved_threads());
    state_.threads = o_.resolved_threads();
    state_.world_size = comm_.size();
    state_.config = to_toml(p_.resolved);
    if (!request_.resume) {
      if (comm_.is_root()) write_file_atomically(run_.resolved(), resolved_toml(p_));
      return;
    }
    std::vector<std::string> skipped;
    const fs::path from = newest_verified(run_.last_checkpoints(), skipped);
    if (comm_.is_root())
      for (const std::string& reason : skipped)
        fmt::print(stderr, "wscsl: warning: skipped {}\n", reason);
    const TrainingState saved = load_checkpoint(from, *model_, optimizer_.get(), true, device_);
    if (saved.world_size != state_.world_size && comm_.is_root())
      fmt::print(stderr,
                 "wscsl: warning: the run was trained by {} process{} and continues with {}; "
                 "the data order is the same, the losses differ in float summation order and "
                 "per-process batch-norm statistics\n",
                 saved.world_size, saved.world_size == 1 ? "" : "es", state_.world_size);
    if (saved.threads != state_.threads && comm_.is_root())
      fmt::print(stderr,
                 "wscsl: warning: the run used {} threads and now {}; the resumed losses will not "
                 "match an uninterrupted run bit for bit\n",
                 saved.threads, state_.threads);
    if (saved.config != state_.config && comm_.is_root()) {
      fmt::print(stderr,
                 "wscsl: warning: the pipeline differs from the one the checkpoint was trained "
                 "with; {} now records the new one\n",
                 run_.resolved().string());
      write_file_atomically(run_.resolved(), resolved_toml(p_));
    }
    const std::string config = state_.config;
    state_ = saved;
    state_.threads = o_.resolved_threads();
    state_.world_size = comm_.size();
    state_.config = config;
    if (comm_.is_root()) run_.truncate_logs(state_.epoch, state_.global_step);
    fmt::print(request_.out, "resuming {} at epoch {}, step {} (global step {}){}\n",
               run_.root().string(), state_.epoch + 1, state_.step, state_.global_step,
               skipped.empty() ? "" : " from " + from.filename().string());
  }

  struct StepOutcome {
    double loss = 0.0;            // of the whole batch
    bool stop_requested = false;  // by a signal to any process
  };

  // A step of several processes names the step in any failure: the other processes stop too.
  StepOutcome distributed_step(const SplitData& train, const torch::Tensor& rows,
                               bool conditioned) {
    if (comm_.size() == 1) return step(train, rows, conditioned);
    try {
      return step(train, rows, conditioned);
    } catch (const std::exception& e) {
      throw CollectiveError(fmt::format("rank {}: step {} (epoch {}) failed: {}", comm_.rank(),
                                        state_.global_step + 1, state_.epoch + 1, e.what()));
    }
  }

  // Each process takes an equal share of the batch (rows); the gradients are averaged over the
  // processes while backward runs, so that every process takes the step of the whole batch.
  StepOutcome step(const SplitData& train, const torch::Tensor& rows, bool conditioned) {
    const std::int64_t batch = rows.size(0);
    const std::int64_t first = batch * comm_.rank() / comm_.size();
    const std::int64_t last = batch * (comm_.rank() + 1) / comm_.size();
    torch::Tensor total = loss_of(train, rows.slice(0, first, last), first, batch, conditioned);
    StepOutcome outcome;
    torch::Tensor reduced;
    std::function<void()> wait_for_reduced = [] {};
    if (comm_.size() == 1) {
      outcome.loss = total.item<double>();
      outcome.stop_requested = g_stop_requested != 0;
    } else {
      // The whole batch's loss, and whether any process was asked to stop, travel while backward
      // runs; every process then decides alike.
      const double share = static_cast<double>(last - first) / static_cast<double>(batch);
      reduced = torch::tensor({total.item<double>() * share, g_stop_requested ? 1.0 : 0.0},
                              torch::kDouble);
      wait_for_reduced = comm_.start_sum(reduced);
      // Averaging then weighs each process's mean by its share of the batch.
      total = total * (share * comm_.size());
    }
    optimizer_->zero_grad();
    if (averager_) averager_->prepare(total);
    total.backward();
    if (comm_.size() > 1) {
      wait_for_reduced();
      outcome.loss = reduced[0].item<double>();
      outcome.stop_requested = reduced[1].item<double>() > 0;
    }
    if (!std::isfinite(outcome.loss))
      throw Error(
          fmt::format("the loss became {} at epoch {}, step {}; the last checkpoint in {} "
                      "is kept (lower trainer.lr or check the data)",
                      outcome.loss, state_.epoch + 1, state_.step + 1, run_.root().string()));
    optimizer_->step();
    state_.epoch_loss_sum += outcome.loss;
    ++state_.epoch_loss_count;
    return outcome;
  }

  // The weighted sum of the losses of `rows`, which sit at `first` in the step's batch of `batch`
  // triplets (augmentation draws from the positions in the whole batch, so that it does not
  // depend on how many processes share the batch).
  torch::Tensor loss_of(const SplitData& train, const torch::Tensor& rows, std::int64_t first,
                        std::int64_t batch, bool conditioned) {
    const torch::Tensor triplets = train.triplets.index_select(0, rows);
    const std::uint64_t seed =
        mix_seed(mix_seed(static_cast<std::uint64_t>(o_.seed), kAugmentStream),
                 static_cast<std::uint64_t>(state_.global_step));
    const auto role_images = [&](std::int64_t role) {
      const ImageRequest request{true, seed, static_cast<std::uint64_t>(role * batch + first)};
      return p_.dataset->images("train", triplets.select(1, role).contiguous(), request)
          .to(device_);
    };
    const TripletImages roles{role_images(0), role_images(1), role_images(2)};
    TripletInput in = embed_triplets(
        roles, [&](const torch::Tensor& images) { return p_.backbone->embed(images); },
        [&](const torch::Tensor& phi) { return p_.condition_module->embed(phi); });
    if (conditioned) in.conditions = train.conditions.index_select(0, rows).to(device_);
    return weighted_loss(p_, in, score_triplets(p_, in), roles);
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
      if (comm_.size() > 1) comm_.broadcast(model_->buffers());  // rank 0's running statistics
      const EmbeddingTable val = embed_split(p_, "val", o_.eval_batch_size, comm_);
      if (comm_.is_root()) validation = evaluate(p_, val, val, false, {});
    }
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
    if (comm_.size() > 1) check_replicas_agree();
    if (comm_.is_root()) {
      std::ofstream(run_.metrics(), std::ios::app) << metrics_line(line) << "\n";
      write_training_curves(read_metrics_log(run_.metrics()), run_.curves());
    }
    state_.epoch += 1;
    state_.step = 0;
    state_.epoch_loss_sum = 0;
    state_.epoch_loss_count = 0;
    commit(best);
  }

  // Every process must hold the same parameters after each epoch: the SHA-256 of each process's
  // parameters goes to replicas.tsv, and processes that differ stop the run.
  void check_replicas_agree() {
    std::string bytes;
    for (const torch::Tensor& p : params_) {
      const torch::Tensor host = p.detach().to(torch::kCPU).contiguous();
      bytes.append(static_cast<const char*>(host.data_ptr()), host.nbytes());
    }
    const std::string digest = sha256_hex(bytes);
    const torch::Tensor mine =
        torch::from_blob(const_cast<char*>(digest.data()),
                         {1, static_cast<std::int64_t>(digest.size())}, torch::kUInt8)
            .clone();
    const torch::Tensor all = comm_.gather_rows(mine);
    std::vector<std::string> digests;
    for (std::int64_t r = 0; r < all.size(0); ++r)
      digests.emplace_back(reinterpret_cast<const char*>(all[r].contiguous().data_ptr()),
                           static_cast<std::size_t>(all.size(1)));
    if (comm_.is_root())
      std::ofstream(run_.replicas(), std::ios::app)
          << fmt::format("{}\t{}\n", state_.epoch + 1, fmt::join(digests, "\t"));
    for (std::size_t r = 1; r < digests.size(); ++r)
      if (digests[r] != digests[0])
        throw Error(
            fmt::format("the parameters of rank {} differ from those of rank 0 after "
                        "epoch {}; the processes no longer train one model",
                        r, state_.epoch + 1));
  }

  // Rank 0 writes `best` (when `best`) and `last`. A checkpoint is never committed with weights
  // or optimiser state that are not finite: the run stops, and the checkpoints already written
  // stay as they are.
  void commit(bool best) {
    const std::string broken = first_non_finite(*model_, *optimizer_);
    if (!broken.empty())
      throw Error(
          fmt::format("{} is not finite after step {} (global); no checkpoint was "
                      "written, those already in {} are kept (lower trainer.lr or "
                      "trainer.weight_decay)",
                      broken, state_.global_step, run_.root().string()));
    if (!comm_.is_root()) return;
    if (best) save_checkpoint(run_.checkpoint("best"), *model_, optimizer_.get(), state_);
    run_.rotate_last(o_.keep_last);
    fault_point(faults::kAfterRotate);
    save_checkpoint(run_.checkpoint("last"), *model_, optimizer_.get(), state_);
  }

  Pipeline& p_;
  const TrainerOptions& o_;
  const RunDirectory& run_;
  TrainRequest request_;
  const Communicator& comm_;
  std::shared_ptr<torch::nn::Module> model_;
  std::vector<torch::Tensor> params_;  // the trainable ones
  std::vector<std::string> param_names_;
  torch::Device device_ = o_.resolved_device();
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<GradientAverager> averager_;             // with several processes
  std::optional<nn::SynchronisedBatchNorm> synchronised_;  // with sync_batch_norm
  TrainingState state_;
};

}  // namespace

void request_stop() {
  g_stop_requested = 1;
}

bool stop_requested() {
  return g_stop_requested != 0;
}

TrainResult train(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request,
                  const Communicator& comm) {
  return Loop(pipeline, run, request, comm).run();
}

TrainResult train(Pipeline& pipeline, const RunDirectory& run, const TrainRequest& request) {
  return train(pipeline, run, request, *Communicator::single());
}

}  // namespace wscsl::host
