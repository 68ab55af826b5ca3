#include "pipeline.hpp"

#include <ATen/Parallel.h>

#include <cmath>
#include <ctime>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <torch/version.h>

#include "wscsl/config/toml.hpp"
#include "wscsl/plugin/toolchain.hpp"
#include "wscsl/util/text.hpp"
#include "wscsl/version.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

Schema<TrainerOptions> TrainerOptions::schema() {
  using O = TrainerOptions;
  Schema<O> s("The training loop (host-owned): optimiser, schedule, data order, checkpoints.");
  s.field("epochs", &O::epochs, "Passes over the training triplets.").min(1);
  s.field("batch_size", &O::batch_size, "Triplets per step.").min(1);
  s.field("drop_last", &O::drop_last, "Skip the last, smaller batch of an epoch.");
  s.field("optimizer", &O::optimizer, "Optimiser.").choices({"adam", "sgd"});
  s.field("lr", &O::lr, "Initial learning rate.").greater_than(0.0);
  s.field("momentum", &O::momentum, "SGD momentum.").min(0.0).less_than(1.0);
  s.field("weight_decay", &O::weight_decay, "L2 weight decay.").min(0.0);
  s.field("beta1", &O::beta1, "Adam β1.").min(0.0).less_than(1.0);
  s.field("beta2", &O::beta2, "Adam β2.").min(0.0).less_than(1.0);
  s.field("lr_schedule", &O::lr_schedule,
          "\"constant\"; \"step\": lr·gamma^⌊epoch/step_size⌋ (DiscoverNet's StepLR); "
          "\"exponential\": lr·gamma^(epoch+1), epochs counted from 0 (CSN and SCE-Net set "
          "lr0·0.985^epoch with epochs counted from 1).")
      .choices({"constant", "step", "exponential"});
  s.field("step_size", &O::step_size, "Epochs between decays of the step schedule.").min(1);
  s.field("gamma", &O::gamma, "Decay factor of the step and exponential schedules.")
      .greater_than(0.0)
      .max(1.0);
  s.field("seed", &O::seed, "Seed of parameter initialisation, data order and augmentation.")
      .min(0);
  s.field("threads", &O::threads,
          "Intra-op threads; 0 uses every hardware thread. Results are "
          "bit-reproducible for a fixed seed and thread count.")
      .min(0);
  s.field("validate", &O::validate, "Run the evaluators on the validation split after each epoch.");
  s.field("select_metric", &O::select_metric,
          "Validation metric that picks the best checkpoint, as \"<evaluator>/<metric>\" (e.g. "
          "\"alignment/ot_accuracy\"); empty keeps the last epoch.");
  s.field("select_mode", &O::select_mode, "Whether a higher or a lower value is better.")
      .choices({"max", "min"});
  s.field("checkpoint_every", &O::checkpoint_every,
          "Also write the `last` checkpoint every N steps (0: only at the end of each epoch).")
      .min(0);
  s.field("log_every", &O::log_every,
          "Steps between progress lines when the output is not a terminal.")
      .min(1);
  s.field("eval_batch_size", &O::eval_batch_size, "Batch size of evaluation.").min(1);
  s.field("evaluate_after", &O::evaluate_after,
          "After training, evaluate the selected checkpoint on the test split.");
  return s;
}

double TrainerOptions::lr_at(std::int64_t epoch) const {
  if (lr_schedule == "step") return lr * std::pow(gamma, static_cast<double>(epoch / step_size));
  if (lr_schedule == "exponential") return lr * std::pow(gamma, static_cast<double>(epoch + 1));
  return lr;
}

int TrainerOptions::resolved_threads() const {
  if (threads > 0) return static_cast<int>(threads);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::shared_ptr<torch::nn::Module> Pipeline::model() const {
  auto root = std::make_shared<torch::nn::Module>("model");
  root->register_module("backbone", std::static_pointer_cast<torch::nn::Module>(backbone));
  root->register_module("condition_module",
                        std::static_pointer_cast<torch::nn::Module>(condition_module));
  for (std::size_t i = 0; i < losses.size(); ++i)
    root->register_module(fmt::format("loss_{}", i),
                          std::static_pointer_cast<torch::nn::Module>(losses[i].loss));
  return root;
}

bool Pipeline::needs_reversed() const {
  for (const WeightedLoss& l : losses)
    if (l.loss->needs_reversed()) return true;
  return false;
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

const std::vector<std::string> kSections = {"plugins", "dataset",    "backbone", "condition_module",
                                            "losses",  "evaluators", "trainer",  "provenance"};

struct PluginsOptions {
  std::vector<std::string> paths;
  std::vector<std::string> require;
};

Schema<PluginsOptions> plugins_schema() {
  Schema<PluginsOptions> s("Where to find plugins and which must be present.");
  s.field("paths", &PluginsOptions::paths,
          "Extra plugin directories, relative to this file; searched after --plugin-path and "
          "WSCSL_PLUGIN_PATH.")
      .path();
  s.field("require", &PluginsOptions::require, "Plugins that must be loaded (by name).");
  return s;
}

struct HostKeys {
  double weight = 1.0;
  std::string name;
};

class Builder {
 public:
  Builder(const ConfigNode& root, const fs::path& source, const Registry& registry)
      : root_(root), registry_(registry) {
    pipeline_.source = source;
    resolved_ = ConfigNode::table();
  }

  Pipeline build() {
    check_sections();
    bind_plugins();
    bind_trainer();
    if (auto c = component(Kind::Dataset, "dataset")) {
      pipeline_.dataset = std::static_pointer_cast<Dataset>(c);
      const DatasetInfo info = pipeline_.dataset->info();
      const std::string origin = pipeline_.dataset->label();
      facts_.set("dataset.num_conditions", ConfigNode::integer(info.num_conditions()), origin);
      facts_.set("dataset.channels", ConfigNode::integer(info.channels), origin);
      facts_.set("dataset.height", ConfigNode::integer(info.height), origin);
      facts_.set("dataset.width", ConfigNode::integer(info.width), origin);
    }
    if (auto c = component(Kind::Backbone, "backbone")) {
      pipeline_.backbone = std::static_pointer_cast<Backbone>(c);
      facts_.set("backbone.embedding_dim", ConfigNode::integer(pipeline_.backbone->embedding_dim()),
                 pipeline_.backbone->label());
    }
    if (auto c = component(Kind::ConditionModule, "condition_module")) {
      pipeline_.condition_module = std::static_pointer_cast<ConditionModule>(c);
      const auto& m = pipeline_.condition_module;
      facts_.set("condition_module.num_embeddings", ConfigNode::integer(m->num_embeddings()),
                 m->label());
      facts_.set("condition_module.output_dim", ConfigNode::integer(m->output_dim()), m->label());
    }
    component_list(Kind::Loss, "losses", true);
    component_list(Kind::Evaluator, "evaluators", false);
    check_select_metric();
    if (diagnostics_.has_errors()) throw ConfigError(diagnostics_);
    pipeline_.resolved = std::move(resolved_);
    return std::move(pipeline_);
  }

 private:
  std::string file() const { return root_.location().file; }

  void check_sections() {
    for (const ConfigMember& m : root_.members()) {
      if (std::find(kSections.begin(), kSections.end(), m.key) != kSections.end()) continue;
      std::vector<std::string> notes;
      std::string suggestion = closest_match(m.key, kSections);
      if (m.key == "loss") suggestion = "losses";
      if (m.key == "evaluator") suggestion = "evaluators";
      if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}'?", suggestion));
      notes.push_back("valid sections: " + join(kSections, ", "));
      diagnostics_.error(m.key_location, fmt::format("unknown pipeline section '{}'", m.key),
                         notes);
    }
  }

  // A section that must be a table (or is absent).
  const ConfigNode* table_section(const std::string& name) {
    const ConfigNode* node = root_.find(name);
    if (node && !node->is_table()) {
      diagnostics_.error(node->location(), fmt::format("'{}' must be a table [{}], got {}", name,
                                                       name, node->describe_type()));
      return nullptr;
    }
    return node;
  }

  void bind_plugins() {
    const ConfigNode* node = table_section("plugins");
    const ConfigNode empty = ConfigNode::table({file(), 1, 1});
    BindScope scope{&diagnostics_, "[plugins]", "", nullptr, {}};
    const PluginsOptions options = plugins_schema().bind(node ? *node : empty, scope);
    for (std::size_t i = 0; i < options.require.size(); ++i) {
      if (registry_.find_plugin(options.require[i])) continue;
      std::vector<std::string> loaded;
      for (const auto& p : registry_.plugins())
        loaded.push_back(p->name);
      const ConfigNode& item = node->find("require")->items()[i];
      diagnostics_.error(item.location(),
                         fmt::format("required plugin '{}' is not loaded", options.require[i]),
                         {"loaded plugins: " + (loaded.empty() ? "none" : join(loaded, ", ")),
                          "add its directory with --plugin-path, WSCSL_PLUGIN_PATH or [plugins] "
                          "paths"});
    }
    if (node) resolved_.set("plugins", plugins_schema().to_config(options));
  }

  void bind_trainer() {
    const ConfigNode* node = table_section("trainer");
    const ConfigNode empty = ConfigNode::table({file(), 1, 1});
    BindScope scope{&diagnostics_, "[trainer]", "", nullptr, {}};
    pipeline_.trainer = TrainerOptions::schema().bind(node ? *node : empty, scope);
    // Parameters are initialised while components are built: seed and threads come first.
    torch::manual_seed(static_cast<std::uint64_t>(pipeline_.trainer.seed));
    at::set_num_threads(pipeline_.trainer.resolved_threads());
  }

  // Host keys of a component table: `type` always; `weight` and `name` for list entries.
  HostKeys bind_host_keys(const ConfigNode& table, const std::string& where,
                          const std::string& type, bool with_weight, bool with_name) {
    HostKeys keys;
    keys.name = type;
    if (const ConfigNode* w = table.find("weight"); w && with_weight) {
      if (!w->is_number() || !(w->as_number() >= 0.0))
        diagnostics_.error(w->location(), fmt::format("{} 'weight' must be a number >= 0, got {}",
                                                      where, w->repr()));
      else
        keys.weight = w->as_number();
    }
    if (const ConfigNode* n = table.find("name"); n && with_name) {
      static const std::regex valid("[a-z][a-z0-9_]*");
      if (!n->is_string() || !std::regex_match(n->as_string(), valid))
        diagnostics_.error(
            n->location(),
            fmt::format("{} 'name' must be lower_snake_case text, got {}", where, n->repr()));
      else
        keys.name = n->as_string();
    }
    return keys;
  }

  // Binds one component table and, when nothing is wrong so far, builds it.
  std::shared_ptr<Component> bind_and_create(Kind kind, const ConfigNode& table,
                                             const std::string& where, HostKeys* keys,
                                             ConfigNode* resolved_table) {
    const ConfigNode* type = table.find("type");
    if (!type) {
      diagnostics_.error(table.location(), fmt::format("{} has no 'type'", where),
                         {fmt::format("available {} types: {}", kind_name(kind),
                                      join(registry_.type_names(kind), ", "))});
      return nullptr;
    }
    if (!type->is_string()) {
      diagnostics_.error(type->location(), fmt::format("{} 'type' expects a string, got {} ({})",
                                                       where, type->describe_type(), type->repr()));
      return nullptr;
    }
    const RegisteredComponent* entry = registry_.find(kind, type->as_string());
    if (!entry) {
      report_unknown_type(kind, *type);
      return nullptr;
    }
    const bool is_list = keys != nullptr;
    HostKeys host = bind_host_keys(table, where, type->as_string(), kind == Kind::Loss, is_list);
    if (keys) *keys = host;
    std::vector<std::string> host_keys = {"type"};
    if (kind == Kind::Loss) host_keys.push_back("weight");
    if (is_list) host_keys.push_back("name");
    BindScope scope{&diagnostics_, where, entry->describe(), &facts_, host_keys};
    const std::size_t errors_before = diagnostics_.error_count();
    std::shared_ptr<const void> options = entry->factory.bind(table, scope);
    if (diagnostics_.error_count() != errors_before) return nullptr;

    ConfigNode out = ConfigNode::table();
    out.set("type", ConfigNode::string(type->as_string()));
    if (kind == Kind::Loss) out.set("weight", ConfigNode::floating(host.weight));
    if (is_list && table.find("name")) out.set("name", ConfigNode::string(host.name));
    ConfigNode options_table = entry->factory.to_config(options.get());
    for (ConfigMember& m : options_table.members())
      out.set(m.key, std::move(m.value));
    *resolved_table = std::move(out);
    if (entry->plugin && std::find(pipeline_.plugins.begin(), pipeline_.plugins.end(),
                                   entry->plugin) == pipeline_.plugins.end())
      pipeline_.plugins.push_back(entry->plugin);

    if (diagnostics_.has_errors()) return nullptr;  // upstream problems: bind only
    const std::string label = fmt::format("{} at {}", entry->describe(), table.location().str());
    try {
      return registry_.create(*entry, options.get(), facts_, label);
    } catch (const std::exception& e) {
      diagnostics_.error(table.location(), e.what());
      return nullptr;
    }
  }

  void report_unknown_type(Kind kind, const ConfigNode& type) {
    std::vector<std::string> notes;
    const std::vector<std::string> names = registry_.type_names(kind);
    const std::string suggestion = closest_match(type.as_string(), names);
    if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}'?", suggestion));
    std::vector<std::string> described;
    for (const RegisteredComponent* c : registry_.of_kind(kind))
      described.push_back(c->factory.type +
                          (c->plugin ? fmt::format(" ({} {})", c->plugin->name, c->plugin->version)
                                     : std::string()));
    notes.push_back(
        fmt::format("available {} types: {}", kind_name(kind),
                    described.empty() ? "none (no plugin provides one)" : join(described, ", ")));
    for (const RefusedPlugin& r : registry_.refused())
      notes.push_back("refused plugin: " + r.reason);
    diagnostics_.error(type.location(),
                       fmt::format("unknown {} type {}", kind_name(kind), type.repr()), notes);
  }

  std::shared_ptr<Component> component(Kind kind, const std::string& section) {
    const ConfigNode* node = root_.find(section);
    if (!node) {
      diagnostics_.error({file(), 1, 1}, fmt::format("the pipeline has no [{}] table", section),
                         {fmt::format("available {} types: {}", kind_name(kind),
                                      join(registry_.type_names(kind), ", "))});
      return nullptr;
    }
    if (!table_section(section)) return nullptr;
    ConfigNode resolved;
    auto built = bind_and_create(kind, *node, "[" + section + "]", nullptr, &resolved);
    if (resolved.is_table() && !resolved.members().empty()) resolved_.set(section, resolved);
    return built;
  }

  void component_list(Kind kind, const std::string& section, bool required) {
    const ConfigNode* node = root_.find(section);
    if (!node) {
      if (required)
        diagnostics_.error({file(), 1, 1}, fmt::format("the pipeline has no [[{}]] table", section),
                           {fmt::format("available {} types: {}", kind_name(kind),
                                        join(registry_.type_names(kind), ", "))});
      return;
    }
    if (!node->is_array()) {
      diagnostics_.error(
          node->location(),
          fmt::format("'{}' must be an array of tables, written [[{}]]", section, section));
      return;
    }
    ConfigNode resolved_list = ConfigNode::array();
    std::vector<std::string> names;
    for (std::size_t i = 0; i < node->items().size(); ++i) {
      const ConfigNode& table = node->items()[i];
      const std::string where = fmt::format("[{}.{}]", section, i);
      if (!table.is_table()) {
        diagnostics_.error(table.location(),
                           fmt::format("{} must be a table, got {}", where, table.describe_type()));
        continue;
      }
      HostKeys keys;
      ConfigNode resolved;
      auto built = bind_and_create(kind, table, where, &keys, &resolved);
      if (resolved.is_table() && !resolved.members().empty()) resolved_list.push_back(resolved);
      if (std::find(names.begin(), names.end(), keys.name) != names.end() && !keys.name.empty())
        diagnostics_.error(table.location(),
                           fmt::format("{} is a second {} named '{}'; give one a distinct 'name'",
                                       where, kind_name(kind), keys.name));
      names.push_back(keys.name);
      if (!built) continue;
      if (kind == Kind::Loss)
        pipeline_.losses.push_back({keys.name, keys.weight, std::static_pointer_cast<Loss>(built)});
      else
        pipeline_.evaluators.push_back({keys.name, std::static_pointer_cast<Evaluator>(built)});
    }
    if (required && node->items().empty())
      diagnostics_.error(node->location(), fmt::format("'{}' needs at least one table", section));
    if (!resolved_list.items().empty()) resolved_.set(section, resolved_list);
  }

  void check_select_metric() {
    const std::string& metric = pipeline_.trainer.select_metric;
    if (metric.empty() || diagnostics_.has_errors()) return;
    const std::string prefix = metric.substr(0, metric.find('/'));
    std::vector<std::string> names;
    for (const NamedEvaluator& e : pipeline_.evaluators)
      names.push_back(e.name);
    if (metric.find('/') != std::string::npos &&
        std::find(names.begin(), names.end(), prefix) != names.end())
      return;
    const ConfigNode* trainer = root_.find("trainer");
    const ConfigNode* value = trainer ? trainer->find("select_metric") : nullptr;
    std::vector<std::string> notes;
    const std::string suggestion = closest_match(prefix, names);
    if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}/...'?", suggestion));
    notes.push_back("evaluators: " + (names.empty() ? std::string("none") : join(names, ", ")));
    diagnostics_.error(value ? value->location() : SourceLocation{file()},
                       fmt::format("[trainer] 'select_metric' = \"{}\" must be "
                                   "\"<evaluator name>/<metric>\" of an evaluator in the pipeline",
                                   metric),
                       notes);
  }

  const ConfigNode& root_;
  const Registry& registry_;
  Diagnostics diagnostics_;
  Facts facts_;
  Pipeline pipeline_;
  ConfigNode resolved_;
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

}  // namespace

Pipeline build_pipeline(const ConfigNode& root, const fs::path& source, const Registry& registry) {
  Pipeline p = Builder(root, source, registry).build();
  p.resolved.set("trainer", TrainerOptions::schema().to_config(p.trainer));
  return p;
}

std::string resolved_toml(const Pipeline& pipeline) {
  ConfigNode root = pipeline.resolved;
  ConfigNode provenance = ConfigNode::table();
  provenance.set("wscsl", ConfigNode::string(WSCSL_VERSION_STRING));
  provenance.set("libtorch", ConfigNode::string(TORCH_VERSION));
  provenance.set("toolchain", ConfigNode::string(WSCSL_TOOLCHAIN_FINGERPRINT));
  provenance.set("threads", ConfigNode::integer(pipeline.trainer.resolved_threads()));
  provenance.set("seed", ConfigNode::integer(pipeline.trainer.seed));
  provenance.set("source", ConfigNode::string(fs::absolute(pipeline.source).string()));
  provenance.set("written", ConfigNode::string(utc_now()));
  ConfigNode plugins = ConfigNode::table();
  for (const PluginRecord* p : pipeline.plugins)
    plugins.set(p->name, ConfigNode::string(fmt::format("{} {}", p->version, p->file)));
  provenance.set("plugins", plugins);
  root.set("provenance", provenance);
  return "# Written by wscsl: the pipeline as it ran, every default filled in.\n" + to_toml(root);
}

}  // namespace wscsl::host
