#include "pipeline.hpp"

#include <fmt/format.h>

#include "builder.hpp"
#include "contracts.hpp"
#include "wscsl/config/toml.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

std::shared_ptr<torch::nn::Module> Pipeline::model() const {
  auto root = std::make_shared<torch::nn::Module>("model");
  root->register_module("backbone", std::static_pointer_cast<torch::nn::Module>(backbone));
  for (const NamedTextEncoder& t : text_encoders)
    root->register_module("text_encoder_" + t.name,
                          std::static_pointer_cast<torch::nn::Module>(t.encoder));
  root->register_module("condition_module",
                        std::static_pointer_cast<torch::nn::Module>(condition_module));
  for (std::size_t i = 0; i < losses.size(); ++i)
    root->register_module(fmt::format("loss_{}", i),
                          std::static_pointer_cast<torch::nn::Module>(losses[i].loss));
  return root;
}

std::vector<std::string> item_texts(const std::vector<std::string>& field_texts,
                                    const torch::Tensor& ids) {
  const torch::Tensor rows = ids.contiguous();
  const auto* id = rows.data_ptr<std::int64_t>();
  std::vector<std::string> texts;
  texts.reserve(static_cast<std::size_t>(rows.numel()));
  for (std::int64_t i = 0; i < rows.numel(); ++i)
    texts.push_back(field_texts.at(static_cast<std::size_t>(id[i])));
  return texts;
}

bool Pipeline::losses_need(Resource resource) const {
  for (const WeightedLoss& l : losses)
    if (l.loss->contract().needs_resource(resource)) return true;
  return false;
}

std::vector<DeclaredMetric> declared_metrics(const Pipeline& pipeline) {
  const std::vector<std::string> conditions = pipeline.dataset->info().condition_names();
  std::vector<DeclaredMetric> metrics;
  for (const NamedEvaluator& e : pipeline.evaluators) {
    for (const MetricSpec& spec : e.evaluator->contract().metrics) {
      const std::vector<std::string> names = expand_metric_name(spec.name, conditions);
      const std::vector<std::string> columns = expand_metric_name(spec.column, conditions);
      for (std::size_t i = 0; i < names.size(); ++i) {
        std::string column = columns.size() == names.size() ? columns[i] : columns.front();
        // A second evaluator of a type (e.g. the papers' strict tie rule beside the default) is
        // told apart by its name.
        if (!column.empty() && e.name != e.type) column += " (" + e.name + ")";
        metrics.push_back({e.name + "/" + names[i], std::move(column)});
      }
    }
  }
  return metrics;
}

ConfigNode read_pipeline(const fs::path& path, const std::vector<std::string>& overrides) {
  ConfigNode root = load_toml_file(path);
  Diagnostics diagnostics;
  for (const std::string& o : overrides)
    apply_override(root, o, diagnostics);
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  return root;
}

std::vector<fs::path> pipeline_plugin_paths(const ConfigNode& root) {
  std::vector<fs::path> paths;
  const ConfigNode* plugins = root.find("plugins");
  const ConfigNode* list = plugins && plugins->is_table() ? plugins->find("paths") : nullptr;
  if (!list || !list->is_array()) return paths;
  for (const ConfigNode& item : list->items()) {
    if (!item.is_string()) continue;  // reported by build_pipeline
    paths.emplace_back(schema_detail::resolve_path(item).as_string());
  }
  return paths;
}

namespace {

// Processes share every batch equally, and a batch holds at most the whole training split:
// checked here where the dataset knows its size without loading, else when training starts.
void check_batch_size(const Pipeline& pipeline, const ConfigNode& root, int processes,
                      Diagnostics& diagnostics) {
  const auto counts = pipeline.dataset->info().triplet_counts;
  const auto train = counts.find(Split::Train);
  const std::string problem = pipeline.trainer.batch_size_problem(
      train == counts.end() ? std::nullopt : std::optional<std::int64_t>(train->second), processes);
  if (problem.empty()) return;
  const ConfigNode* table = root.find("trainer");
  const ConfigNode* value = table ? table->find("batch_size") : nullptr;
  diagnostics.error(value ? value->location() : SourceLocation{root.location().file}, problem);
}

// Every prefix of [[trainer.parameter_groups]] holds a trainable parameter, and none holds one
// that another group holds.
void check_groups(const Pipeline& pipeline, const ConfigNode& root, Diagnostics& diagnostics) {
  if (pipeline.trainer.parameter_groups.empty()) return;
  std::vector<std::string> names;
  for (const auto& t : pipeline.model()->named_parameters())
    if (t.value().requires_grad()) names.push_back(t.key());
  check_parameter_groups(pipeline.trainer.parameter_groups, names, root.find("trainer"),
                         diagnostics);
}

}  // namespace

Pipeline build_pipeline(const ConfigNode& root, const fs::path& source, const Registry& registry,
                        int processes) {
  Diagnostics diagnostics;
  BuiltPipeline built = build_components(root, source, registry, diagnostics);
  if (!diagnostics.has_errors()) check_contracts(built, registry, diagnostics);
  if (!diagnostics.has_errors()) check_select_metric(built.pipeline, root, diagnostics);
  if (!diagnostics.has_errors()) check_batch_size(built.pipeline, root, processes, diagnostics);
  if (!diagnostics.has_errors()) check_groups(built.pipeline, root, diagnostics);
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  Pipeline& p = built.pipeline;
  p.warnings = std::move(diagnostics);
  ConfigNode trainer = TrainerOptions::schema().to_config(p.trainer);
  if (!p.trainer.parameter_groups.empty())
    trainer.set("parameter_groups", parameter_groups_config(p.trainer.parameter_groups));
  p.resolved.set("trainer", std::move(trainer));
  return std::move(p);
}

}  // namespace wscsl::host
