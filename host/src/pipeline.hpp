// A pipeline: the TOML file that names a dataset, a backbone, a condition module, losses,
// evaluators and the trainer settings, bound strictly and built from the loaded plugins.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "wscsl/config/node.hpp"
#include "wscsl/runtime/registry.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::host {

struct TrainerOptions {
  std::int64_t epochs = 5;
  std::int64_t batch_size = 64;
  bool drop_last = false;
  std::string optimizer = "adam";
  double lr = 1e-3;
  double momentum = 0.9;
  double weight_decay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  std::string lr_schedule = "constant";
  std::int64_t step_size = 30;
  double gamma = 0.1;
  std::int64_t seed = 1;
  std::int64_t threads = 0;
  bool validate = true;
  std::string select_metric;
  std::string select_mode = "max";
  std::int64_t checkpoint_every = 0;
  std::int64_t log_every = 100;
  std::int64_t eval_batch_size = 1024;
  bool evaluate_after = true;

  static Schema<TrainerOptions> schema();
  // The learning rate of epoch `epoch` (0-based) under the schedule.
  double lr_at(std::int64_t epoch) const;
  // The thread count the trainer uses: `threads`, or all hardware threads when 0.
  int resolved_threads() const;
};

struct WeightedLoss {
  std::string name;
  double weight = 1.0;
  std::shared_ptr<Loss> loss;
};

struct NamedEvaluator {
  std::string name;
  std::shared_ptr<Evaluator> evaluator;
};

struct Pipeline {
  std::filesystem::path source;  // the pipeline file (or a run's resolved.toml)
  TrainerOptions trainer;
  std::shared_ptr<Dataset> dataset;
  std::shared_ptr<Backbone> backbone;
  std::shared_ptr<ConditionModule> condition_module;
  std::vector<WeightedLoss> losses;
  std::vector<NamedEvaluator> evaluators;
  ConfigNode resolved;                       // every option with its value, defaults included
  std::vector<const PluginRecord*> plugins;  // the plugins the components came from

  // The trainable state, as one module: backbone, condition_module, loss_<i>.
  std::shared_ptr<torch::nn::Module> model() const;
  bool needs_reversed() const;
};

// Reads a pipeline file and applies "--set key=value" overrides. Throws ConfigError.
ConfigNode read_pipeline(const std::filesystem::path& path,
                         const std::vector<std::string>& overrides);

// The [plugins] paths of a pipeline, resolved against the file that lists them.
std::vector<std::filesystem::path> pipeline_plugin_paths(const ConfigNode& root);

// Binds and constructs every component (no data is read). Seeds LibTorch with trainer.seed and
// sets the thread count before any parameter is initialised. Collects every problem and throws one
// ConfigError.
Pipeline build_pipeline(const ConfigNode& root, const std::filesystem::path& source,
                        const Registry& registry);

// The resolved pipeline plus a [provenance] table (versions, plugins, threads), as TOML.
std::string resolved_toml(const Pipeline& pipeline);

}  // namespace wscsl::host
