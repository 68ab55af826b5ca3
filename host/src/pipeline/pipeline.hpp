// A pipeline: the TOML file that names a dataset, a backbone, a condition module, losses,
// evaluators and the trainer settings, bound strictly and built from the loaded plugins.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "trainer_options.hpp"
#include "wscsl/config/node.hpp"
#include "wscsl/runtime/registry.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::host {

struct WeightedLoss {
  std::string name;
  double weight = 1.0;
  std::shared_ptr<Loss> loss;
};

// A [[text_encoders]] entry: the encoder of one of the dataset's text fields, under the name the
// condition module, losses and evaluators read its features by (ItemFeatures::texts).
struct NamedTextEncoder {
  std::string name;
  std::string field;
  std::shared_ptr<TextEncoder> encoder;
};

// The texts of items `ids` (1-D image ids, on the CPU) in one of a split's text fields.
std::vector<std::string> item_texts(const std::vector<std::string>& field_texts,
                                    const torch::Tensor& ids);

struct NamedEvaluator {
  std::string name;  // its table's `name`, else its type
  std::string type;
  std::shared_ptr<Evaluator> evaluator;
  SourceLocation location;  // of its [[evaluators]] table, for messages about its settings
};

struct Pipeline {
  std::filesystem::path source;  // the pipeline file (or a run's resolved.toml)
  TrainerOptions trainer;
  std::shared_ptr<Dataset> dataset;
  std::shared_ptr<Backbone> backbone;
  std::vector<NamedTextEncoder> text_encoders;
  std::shared_ptr<ConditionModule> condition_module;
  std::vector<WeightedLoss> losses;
  std::vector<NamedEvaluator> evaluators;
  ConfigNode resolved;                       // every option with its value, defaults included
  std::vector<const PluginRecord*> plugins;  // the plugins the components came from
  Diagnostics warnings;  // e.g. an option that has no effect, at its line; nothing failed

  // The trainable state, as one module: backbone, text_encoder_<name>, condition_module, loss_<i>.
  std::shared_ptr<torch::nn::Module> model() const;
  // Whether any loss's contract needs `resource` (the trainer computes it only then).
  bool losses_need(Resource resource) const;
};

// A metric an evaluator of the pipeline declares, with the evaluator's name and the conditions
// filled in: {"alignment/ot_accuracy", "OT"}, {"retrieval/map/color", "MAP color"}.
struct DeclaredMetric {
  std::string name;
  std::string column;  // heading in bench tables; empty when not a bench column
};
// In evaluator order, then declaration order.
std::vector<DeclaredMetric> declared_metrics(const Pipeline& pipeline);

// Reads a pipeline file and applies "--set key=value" overrides. Throws ConfigError.
ConfigNode read_pipeline(const std::filesystem::path& path,
                         const std::vector<std::string>& overrides);

// The [plugins] paths of a pipeline, resolved against the file that lists them.
std::vector<std::filesystem::path> pipeline_plugin_paths(const ConfigNode& root);

// Binds and constructs every component (no data is read) and checks the contracts between them.
// Seeds LibTorch with trainer.seed and sets the thread count before any parameter is initialised.
// Collects every problem and throws one ConfigError. `processes` share each batch (it must
// divide trainer.batch_size).
Pipeline build_pipeline(const ConfigNode& root, const std::filesystem::path& source,
                        const Registry& registry, int processes = 1);

}  // namespace wscsl::host
