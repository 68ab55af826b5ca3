#include "trainer_options.hpp"

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "wscsl/plugin/toolchain.hpp"

namespace wscsl::host {
namespace {

std::optional<DeviceSetting> parse_device(const std::string& text) {
  if (text == "auto") return DeviceSetting{DeviceKind::Auto, -1};
  if (text == "cpu") return DeviceSetting{DeviceKind::Cpu, -1};
  if (text == "cuda") return DeviceSetting{DeviceKind::Cuda, -1};
  const std::string prefix = "cuda:";
  if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size() ||
      !std::isdigit(static_cast<unsigned char>(text[prefix.size()])))
    return std::nullopt;
  std::int64_t index = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data() + prefix.size(), end, index);
  if (error != std::errc() || stop != end) return std::nullopt;
  return DeviceSetting{DeviceKind::Cuda, index};
}

std::string spell_device(const DeviceSetting& d) {
  switch (d.kind) {
    case DeviceKind::Auto:
      return "auto";
    case DeviceKind::Cpu:
      return "cpu";
    case DeviceKind::Cuda:
      return d.index < 0 ? std::string("cuda") : fmt::format("cuda:{}", d.index);
  }
  return "auto";
}

// Why this process cannot compute on `d`, or empty when it can.
std::string unavailable(const DeviceSetting& d) {
  if (d.kind != DeviceKind::Cuda) return {};
  // hasCUDART: LibTorch's CUDA part is loaded. (at::hasCUDA() also needs a visible GPU, so it is
  // false for a CUDA LibTorch on a machine without one.)
  if (!at::globalContext().hasCUDART())
    return fmt::format(
        "\"{}\" needs CUDA, and this wscsl's LibTorch ({}) has no CUDA support; use "
        "\"cpu\" or \"auto\", or build against a CUDA LibTorch "
        "(docs/distributed.md)",
        spell_device(d), WSCSL_TORCH_IDENTITY);
  const auto count = static_cast<std::int64_t>(torch::cuda::device_count());
  if (count == 0)
    return fmt::format("\"{}\" needs a GPU, and none is visible; use \"cpu\" or \"auto\"",
                       spell_device(d));
  if (d.index >= count)
    return fmt::format("\"{}\" names GPU {}, and {} visible (cuda:0 to cuda:{})", spell_device(d),
                       d.index, count == 1 ? std::string("1 is") : fmt::format("{} are", count),
                       count - 1);
  return {};
}

}  // namespace

Schema<TrainerOptions> TrainerOptions::schema() {
  using O = TrainerOptions;
  Schema<O> s("The training loop (host-owned): optimiser, schedule, data order, checkpoints.");
  s.field("epochs", &O::epochs, "Passes over the training triplets.").min(1);
  s.field("batch_size", &O::batch_size, "Triplets per step.").min(1);
  s.field("drop_last", &O::drop_last, "Skip the last, smaller batch of an epoch.");
  s.field("read_ahead", &O::read_ahead,
          "Read the next batch on a background thread while the step trains on this one, where "
          "the step leaves that thread a core: it trains on a GPU, or on fewer threads than the "
          "process's share of the cores (the batches are the same either way).");
  s.field("optimizer", &O::optimizer, "Optimiser.",
          EnumChoices<OptimizerKind>{
              {OptimizerKind::Adam, "adam", "Adam with beta1, beta2 and L2 weight decay"},
              {OptimizerKind::Sgd, "sgd", "SGD with momentum and L2 weight decay"}});
  // The optimisers apply it to float32 parameters, so it must be a float32 too.
  s.field("lr", &O::lr, "Initial learning rate of the parameters in no parameter group.")
      .greater_than(0.0)
      .max(std::numeric_limits<float>::max());
  const auto sgd = [](const O& o) { return o.optimizer == OptimizerKind::Sgd; };
  const auto adam = [](const O& o) { return o.optimizer == OptimizerKind::Adam; };
  s.field("momentum", &O::momentum, "SGD momentum.")
      .min(0.0)
      .less_than(1.0)
      .only_when("optimizer = \"sgd\"", sgd);
  s.field("weight_decay", &O::weight_decay, "L2 weight decay.").min(0.0);
  s.field("beta1", &O::beta1, "Adam β1.")
      .min(0.0)
      .less_than(1.0)
      .only_when("optimizer = \"adam\"", adam);
  s.field("beta2", &O::beta2, "Adam β2.")
      .min(0.0)
      .less_than(1.0)
      .only_when("optimizer = \"adam\"", adam);
  s.field("lr_schedule", &O::lr_schedule,
          "\"constant\"; \"step\": lr·gamma^⌊epoch/step_size⌋ (DiscoverNet's StepLR); "
          "\"exponential\": lr·gamma^(epoch+1), epochs counted from 0 (CSN and SCE-Net set "
          "lr0·0.985^epoch with epochs counted from 1).",
          EnumChoices<LrSchedule>{{LrSchedule::Constant, "constant", "lr throughout"},
                                  {LrSchedule::Step, "step", "lr·gamma^⌊epoch/step_size⌋"},
                                  {LrSchedule::Exponential, "exponential", "lr·gamma^(epoch+1)"}});
  s.field("step_size", &O::step_size, "Epochs between decays of the step schedule.")
      .min(1)
      .only_when("lr_schedule = \"step\"",
                 [](const O& o) { return o.lr_schedule == LrSchedule::Step; });
  s.field("gamma", &O::gamma, "Decay factor of the step and exponential schedules.")
      .greater_than(0.0)
      .max(1.0)
      .only_when("lr_schedule = \"step\" or \"exponential\"",
                 [](const O& o) { return o.lr_schedule != LrSchedule::Constant; });
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
          "\"alignment/ot_accuracy\"); empty keeps the last epoch.")
      // A warning: pipelines commonly keep their select_metric while validation is switched off
      // for a quick run.
      .only_when(
          "validate = true", [](const O& o) { return o.validate; }, Inert::Warning);
  s.field("select_mode", &O::select_mode, "Whether a higher or a lower value is better.",
          EnumChoices<SelectMode>{{SelectMode::Max, "max", "higher is better"},
                                  {SelectMode::Min, "min", "lower is better"}})
      .only_when("a select_metric", [](const O& o) { return !o.select_metric.empty(); });
  s.field("checkpoint_every", &O::checkpoint_every,
          "Also write the `last` checkpoint every N steps (0: only at the end of each epoch).")
      .min(0);
  s.field("keep_last", &O::keep_last,
          "`last` checkpoints kept (last.pt, last.1.pt, …): resume and eval fall back to the "
          "newest that verifies.")
      .min(1)
      .max(100);
  s.field("rendezvous_timeout_s", &O::rendezvous_timeout_s,
          "With several processes: seconds every process has to reach the rendezvous store (the "
          "first contact) before the run stops with the endpoint, the launcher and the way out.")
      .min(1)
      .max(86400);
  s.field("collective_timeout_s", &O::collective_timeout_s,
          "With several processes: seconds a process waits for the others (to join, or in a "
          "collective) before the run stops with the rank and step named.")
      .min(1)
      .max(86400);
  s.field("collective_backend", &O::collective_backend,
          "With several processes: the c10d backend that reduces tensors on a GPU (tensors on "
          "the CPU always go through Gloo).",
          EnumChoices<CollectiveBackendSetting>{
              {CollectiveBackendSetting::Auto, "auto",
               "NCCL where the model is on a GPU and wscsl is built with NCCL, else Gloo"},
              {CollectiveBackendSetting::Gloo, "gloo", "Gloo, through host memory"},
              {CollectiveBackendSetting::Nccl, "nccl", "NCCL, GPU to GPU"}});
  s.field("sync_batch_norm", &O::sync_batch_norm,
          "With several processes: batch norm (wscsl::nn::BatchNorm2d, in every in-tree "
          "backbone) takes its training statistics over the whole batch of every process, as "
          "PyTorch's SyncBatchNorm; false: over each process's share.");
  s.field("precision", &O::precision,
          "The arithmetic of the training step's forward; weights, gradients, the optimiser's "
          "state, checkpoints and evaluation stay float32.",
          EnumChoices<Precision>{
              {Precision::Float32, "32", "float32 throughout"},
              {Precision::Bf16Mixed, "bf16-mixed",
               "the forward and loss under LibTorch's bfloat16 autocast (matrix products and "
               "convolutions in bfloat16), as Lightning's precision=\"bf16-mixed\""}});
  s.field("log_every", &O::log_every,
          "Steps between progress lines when the output is not a terminal, and between the "
          "points of TensorBoard's training scalars.")
      .min(1);
  s.field("tensorboard", &O::tensorboard,
          "Write TensorBoard event files (events.out.tfevents.*) into the run directory: the "
          "training scalars, each epoch's metrics, the test metrics, the run's pictures and its "
          "options as hyperparameters.");
  s.field("eval_batch_size", &O::eval_batch_size, "Batch size of evaluation.").min(1);
  s.field("evaluate_after", &O::evaluate_after,
          "After training, evaluate the selected checkpoint on the test split.");
  s.field("device", &O::device,
          "Where the model trains and embeds: \"auto\" (CUDA when LibTorch has it and a GPU is "
          "visible, else the CPU), \"cpu\", \"cuda\" (the first visible GPU) or \"cuda:N\". "
          "Evaluators compute on the CPU.",
          Spelling<DeviceSetting>{{"auto", "cpu", "cuda", "cuda:N"}, parse_device, spell_device});
  s.check([](const O& o, FieldChecker& check) {
    if (const std::string why = unavailable(o.device); !why.empty()) {
      check.error("device", why);
      return;
    }
    if (o.collective_backend != CollectiveBackendSetting::Nccl) return;
    if (!nccl_built_in())
      check.error("collective_backend",
                  fmt::format("\"nccl\" needs a wscsl built with NCCL, and this one's LibTorch "
                              "({}) is not a CUDA LibTorch 2 or NCCL's headers were missing when "
                              "it was configured; use \"gloo\" or \"auto\" "
                              "(docs/distributed.md)",
                              WSCSL_TORCH_IDENTITY));
    else if (!trains_on_gpu(o.device))
      check.error("collective_backend",
                  "\"nccl\" reduces tensors on a GPU, and the model trains on the CPU here "
                  "(trainer.device); use \"gloo\" or \"auto\"");
  });
  return s;
}

TrainerOptions TrainerOptions::bind(const ConfigNode& table, BindScope& scope) {
  scope.host_keys.push_back("parameter_groups");  // bound here, beside the schema
  TrainerOptions options = schema().bind(table, scope);
  options.parameter_groups = bind_parameter_groups(table, scope);
  return options;
}

SchemaDescription TrainerOptions::description() {
  SchemaDescription d = schema().description();
  FieldDescription groups;
  groups.name = "parameter_groups";
  groups.type_name = "array of tables";
  groups.default_value = ConfigNode::array();
  groups.doc =
      "[[trainer.parameter_groups]]: parameters that train at a learning rate of their own, each "
      "table a group (the keys below); a parameter is in at most one, the others train at lr.";
  d.fields.push_back(groups);
  for (FieldDescription f : ParameterGroup::schema().description().fields) {
    f.name = "parameter_groups[]." + f.name;
    d.fields.push_back(std::move(f));
  }
  return d;
}

double TrainerOptions::lr_at(std::int64_t epoch, double initial) const {
  switch (lr_schedule) {
    case LrSchedule::Constant:
      return initial;
    case LrSchedule::Step:
      return initial * std::pow(gamma, static_cast<double>(epoch / step_size));
    case LrSchedule::Exponential:
      return initial * std::pow(gamma, static_cast<double>(epoch + 1));
  }
  return initial;
}

bool trains_on_gpu(const DeviceSetting& device) {
  switch (device.kind) {
    case DeviceKind::Auto:
      return torch::cuda::is_available();
    case DeviceKind::Cpu:
      return false;
    case DeviceKind::Cuda:
      return true;
  }
  return false;
}

std::string TrainerOptions::batch_size_problem(std::optional<std::int64_t> train_triplets,
                                               int processes) const {
  if (batch_size % processes != 0)
    return fmt::format(
        "[trainer] 'batch_size' = {} cannot be shared equally by {} processes (choose a multiple "
        "of {})",
        batch_size, processes, processes);
  if (train_triplets && batch_size > *train_triplets)
    return fmt::format(
        "[trainer] 'batch_size' = {} is larger than the training split, which holds {} triplets",
        batch_size, *train_triplets);
  return {};
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
}

void set_trainer_device(ConfigNode& root, const DeviceSetting& device, const std::string& why) {
  const SourceLocation where{why};
  ConfigNode* trainer = root.find("trainer");
  if (!trainer || !trainer->is_table()) trainer = &root.set("trainer", ConfigNode::table(where));
  trainer->set("device", ConfigNode::string(spell_device(device), where), where);
}

}  // namespace wscsl::host
