#include "trainer_options.hpp"

#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace wscsl::host {

Schema<TrainerOptions> TrainerOptions::schema() {
  using O = TrainerOptions;
  Schema<O> s("The training loop (host-owned): optimiser, schedule, data order, checkpoints.");
  s.field("epochs", &O::epochs, "Passes over the training triplets.").min(1);
  s.field("batch_size", &O::batch_size, "Triplets per step.").min(1);
  s.field("drop_last", &O::drop_last, "Skip the last, smaller batch of an epoch.");
  s.field("optimizer", &O::optimizer, "Optimiser.",
          EnumChoices<OptimizerKind>{
              {OptimizerKind::Adam, "adam", "Adam with beta1, beta2 and L2 weight decay"},
              {OptimizerKind::Sgd, "sgd", "SGD with momentum and L2 weight decay"}});
  // The optimisers apply it to float32 parameters, so it must be a float32 too.
  s.field("lr", &O::lr, "Initial learning rate.")
      .greater_than(0.0)
      .max(std::numeric_limits<float>::max());
  s.field("momentum", &O::momentum, "SGD momentum.").min(0.0).less_than(1.0);
  s.field("weight_decay", &O::weight_decay, "L2 weight decay.").min(0.0);
  s.field("beta1", &O::beta1, "Adam β1.").min(0.0).less_than(1.0);
  s.field("beta2", &O::beta2, "Adam β2.").min(0.0).less_than(1.0);
  s.field("lr_schedule", &O::lr_schedule,
          "\"constant\"; \"step\": lr·gamma^⌊epoch/step_size⌋ (DiscoverNet's StepLR); "
          "\"exponential\": lr·gamma^(epoch+1), epochs counted from 0 (CSN and SCE-Net set "
          "lr0·0.985^epoch with epochs counted from 1).",
          EnumChoices<LrSchedule>{{LrSchedule::Constant, "constant", "lr throughout"},
                                  {LrSchedule::Step, "step", "lr·gamma^⌊epoch/step_size⌋"},
                                  {LrSchedule::Exponential, "exponential", "lr·gamma^(epoch+1)"}});
  s.field("step_size", &O::step_size, "Epochs between decays of the step schedule.").min(1);
  s.field("gamma", &O::gamma, "Decay factor of the step and exponential schedules.")
      .greater_than(0.0)
      .max(1.0);
  s.field("seed", &O::seed, "Seed of parameter initialisation, data order and augmentation.")
      .min(0);
  s.field("threads", &O::threads,
          "Intra-op threads; 0 uses every hardware thread. Results are "
          "bit-reproducible for a fixed seed and thread count.")
      .min(0)
      .max(256);
  s.field("validate", &O::validate, "Run the evaluators on the validation split after each epoch.");
  s.field("select_metric", &O::select_metric,
          "Validation metric that picks the best checkpoint, as \"<evaluator>/<metric>\" (e.g. "
          "\"alignment/ot_accuracy\"); empty keeps the last epoch.");
  s.field("select_mode", &O::select_mode, "Whether a higher or a lower value is better.",
          EnumChoices<SelectMode>{{SelectMode::Max, "max", "higher is better"},
                                  {SelectMode::Min, "min", "lower is better"}});
  s.field("checkpoint_every", &O::checkpoint_every,
          "Also write the `last` checkpoint every N steps (0: only at the end of each epoch).")
      .min(0);
  s.field("keep_last", &O::keep_last,
          "`last` checkpoints kept (last.pt, last.1.pt, …): resume and eval fall back to the "
          "newest that verifies.")
      .min(1)
      .max(100);
  s.field("collective_timeout_s", &O::collective_timeout_s,
          "With several processes: seconds a process waits for the others (to join, or in a "
          "collective) before the run stops with the rank and step named.")
      .min(1)
      .max(86400);
  s.field("log_every", &O::log_every,
          "Steps between progress lines when the output is not a terminal.")
      .min(1);
  s.field("eval_batch_size", &O::eval_batch_size, "Batch size of evaluation.").min(1);
  s.field("evaluate_after", &O::evaluate_after,
          "After training, evaluate the selected checkpoint on the test split.");
  return s;
}

double TrainerOptions::lr_at(std::int64_t epoch) const {
  switch (lr_schedule) {
    case LrSchedule::Constant:
      return lr;
    case LrSchedule::Step:
      return lr * std::pow(gamma, static_cast<double>(epoch / step_size));
    case LrSchedule::Exponential:
      return lr * std::pow(gamma, static_cast<double>(epoch + 1));
  }
  return lr;
}

int TrainerOptions::resolved_threads() const {
  if (threads > 0) return static_cast<int>(threads);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

bool TrainerOptions::improves(double value, double best) const {
  if (std::isnan(best)) return !std::isnan(value);
  switch (select_mode) {
    case SelectMode::Max:
      return value > best;
    case SelectMode::Min:
      return value < best;
  }
  return false;
}

void apply_determinism(const TrainerOptions& options) {
  torch::manual_seed(static_cast<std::uint64_t>(options.seed));
  at::set_num_threads(options.resolved_threads());
}

}  // namespace wscsl::host
