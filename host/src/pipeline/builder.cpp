#include "builder.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "contracts.hpp"
#include "host_keys.hpp"
#include "plugins_section.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

const std::vector<std::string> kSections = {"plugins",       "dataset",          "backbone",
                                            "text_encoders", "condition_module", "losses",
                                            "evaluators",    "trainer",          "provenance"};

BindScope scope_of(Diagnostics& diagnostics, bool recorded, std::string table,
                   std::string component = {}, const Facts* facts = nullptr,
                   std::vector<std::string> host_keys = {}) {
  BindScope scope;
  scope.diagnostics = &diagnostics;
  scope.recorded = recorded;
  scope.table = std::move(table);
  scope.component = std::move(component);
  scope.facts = facts;
  scope.host_keys = std::move(host_keys);
  return scope;
}

class Builder {
 public:
  Builder(const ConfigNode& root, const fs::path& source, const Registry& registry,
          Diagnostics& diagnostics)
      : root_(root),
        registry_(registry),
        diagnostics_(diagnostics),
        recorded_(root.find("provenance") != nullptr) {
    built_.pipeline.source = source;
    resolved_ = ConfigNode::table();
  }

  BuiltPipeline build() {
    check_sections();
    bind_plugins();
    bind_trainer();
    Pipeline& p = built_.pipeline;
    // Parameters are initialised while components are built: the seed comes first.
    if (!diagnostics_.has_errors()) apply_determinism(p.trainer);
    if (auto c = component(Kind::Dataset, "dataset")) {
      p.dataset = std::static_pointer_cast<Dataset>(c);
      const DatasetInfo info = p.dataset->info();
      establish(facts::dataset_num_conditions, info.num_conditions(), *p.dataset);
      establish(facts::dataset_channels, info.channels, *p.dataset);
      establish(facts::dataset_height, info.height, *p.dataset);
      establish(facts::dataset_width, info.width, *p.dataset);
      if (!info.text_features.empty())
        facts_.set(facts::dataset_text_features.name,
                   ConfigNode::string(info.text_features.string()), p.dataset->label());
    }
    if (auto c = component(Kind::Backbone, "backbone")) {
      p.backbone = std::static_pointer_cast<Backbone>(c);
      establish(facts::backbone_embedding_dim, p.backbone->embedding_dim(), *p.backbone);
      if (p.backbone->contract().provides_resource(Resource::FeatureMap, ""))
        establish(facts::backbone_feature_map_channels, p.backbone->feature_map_channels(),
                  *p.backbone);
    }
    component_list(Kind::TextEncoder, "text_encoders", false);
    if (auto c = component(Kind::ConditionModule, "condition_module")) {
      p.condition_module = std::static_pointer_cast<ConditionModule>(c);
      const ConditionModule& m = *p.condition_module;
      establish(facts::condition_module_num_embeddings, m.num_embeddings(), m);
      establish(facts::condition_module_output_dim, m.output_dim(), m);
    }
    component_list(Kind::Loss, "losses", true);
    component_list(Kind::Evaluator, "evaluators", false);
    p.resolved = std::move(resolved_);
    return std::move(built_);
  }

 private:
  std::string file() const { return root_.location().file; }

  void establish(const Fact& fact, std::int64_t value, const Component& by) {
    facts_.set(fact.name, ConfigNode::integer(value), by.label());
  }

  void check_sections() {
    for (const ConfigMember& m : root_.members()) {
      if (std::find(kSections.begin(), kSections.end(), m.key) != kSections.end()) continue;
      std::vector<std::string> notes;
      std::string suggestion = closest_match(m.key, kSections);
      if (m.key == "loss") suggestion = "losses";
      if (m.key == "evaluator") suggestion = "evaluators";
      if (m.key == "text_encoder") suggestion = "text_encoders";
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
    BindScope scope = scope_of(diagnostics_, recorded_, "[plugins]");
    ConfigNode resolved = bind_plugins_section(node ? *node : empty, registry_, scope);
    if (node) resolved_.set("plugins", std::move(resolved));
  }

  void bind_trainer() {
    const ConfigNode* node = table_section("trainer");
    const ConfigNode empty = ConfigNode::table({file(), 1, 1});
    BindScope scope = scope_of(diagnostics_, recorded_, "[trainer]");
    built_.pipeline.trainer = TrainerOptions::bind(node ? *node : empty, scope);
  }

  // Binds one component table and, when nothing is wrong so far, builds it.
  std::shared_ptr<Component> bind_and_create(Kind kind, TablePlace place, const ConfigNode& table,
                                             const std::string& where, HostKeys& keys,
                                             ConfigNode& resolved_table) {
    if (!table.find("type")) {
      diagnostics_.error(table.location(), fmt::format("{} has no 'type'", where),
                         {fmt::format("available {} types: {}", kind_name(kind),
                                      join(registry_.type_names(kind), ", "))});
      return nullptr;
    }
    const std::size_t errors_before = diagnostics_.error_count();
    BindScope host_scope = scope_of(diagnostics_, recorded_, where);
    keys = bind_host_keys(table, kind, place, host_scope);
    // A wrong `weight` or `name` does not hide the component's own mistakes: only a `type` that
    // names no component stops the table here.
    if (keys.type.empty() && diagnostics_.error_count() != errors_before) return nullptr;
    const RegisteredComponent* entry = registry_.find(kind, keys.type);
    if (!entry) {
      report_unknown_type(kind, *table.find("type"), registry_, diagnostics_);
      return nullptr;
    }
    BindScope scope = scope_of(diagnostics_, recorded_, where, entry->describe(), &facts_,
                               host_key_names(kind, place));
    std::shared_ptr<const void> options = entry->factory.bind(table, scope);
    if (diagnostics_.error_count() != errors_before) return nullptr;
    if (!scope.missing_facts.empty()) {
      report_missing_facts({kind, where, table.location(), nullptr, entry->describe()},
                           entry->factory.contract(options.get()), scope.missing_facts,
                           built_.sites, registry_, diagnostics_);
      return nullptr;
    }
    resolved_table = resolved_component(kind, place, keys, entry->factory.to_config(options.get()));
    if (entry->plugin && std::find(built_.pipeline.plugins.begin(), built_.pipeline.plugins.end(),
                                   entry->plugin) == built_.pipeline.plugins.end())
      built_.pipeline.plugins.push_back(entry->plugin);

    if (diagnostics_.has_errors()) return nullptr;  // upstream problems: bind only
    const std::string label = fmt::format("{} at {}", entry->describe(), table.location().str());
    try {
      auto built = registry_.create(*entry, options.get(), facts_, label);
      built_.sites.push_back({kind, where, table.location(), built.get(), entry->describe()});
      return built;
    } catch (const std::exception& e) {
      diagnostics_.error(table.location(), e.what());
      return nullptr;
    }
  }

  static ConfigNode resolved_component(Kind kind, TablePlace place, const HostKeys& keys,
                                       ConfigNode options) {
    ConfigNode out = ConfigNode::table();
    out.set("type", ConfigNode::string(keys.type));
    if (kind == Kind::Loss) out.set("weight", ConfigNode::floating(keys.weight));
    if (kind == Kind::TextEncoder) out.set("field", ConfigNode::string(keys.field));
    if (place == TablePlace::ListEntry && keys.name)
      out.set("name", ConfigNode::string(*keys.name));
    for (ConfigMember& m : options.members())
      out.set(m.key, std::move(m.value));
    return out;
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
    HostKeys keys;
    ConfigNode resolved;
    auto built =
        bind_and_create(kind, TablePlace::Single, *node, "[" + section + "]", keys, resolved);
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
      auto built = bind_and_create(kind, TablePlace::ListEntry, table, where, keys, resolved);
      if (resolved.is_table() && !resolved.members().empty()) resolved_list.push_back(resolved);
      const std::string name =
          keys.name.value_or(kind == Kind::TextEncoder ? keys.field : keys.type);
      if (!name.empty() && std::find(names.begin(), names.end(), name) != names.end())
        diagnostics_.error(table.location(),
                           fmt::format("{} is a second {} named '{}'; give one a distinct 'name'",
                                       where, kind_name(kind), name));
      names.push_back(name);
      if (!built) continue;
      Pipeline& p = built_.pipeline;
      if (kind == Kind::TextEncoder)
        add_text_encoder(table, where, name, keys.field,
                         std::static_pointer_cast<TextEncoder>(built));
      else if (kind == Kind::Loss)
        p.losses.push_back({name, keys.weight, std::static_pointer_cast<Loss>(built)});
      else
        p.evaluators.push_back(
            {name, keys.type, std::static_pointer_cast<Evaluator>(built), table.location()});
    }
    if (required && node->items().empty())
      diagnostics_.error(node->location(), fmt::format("'{}' needs at least one table", section));
    if (!resolved_list.items().empty()) resolved_.set(section, resolved_list);
  }

  // Text features live in φ's space; the encoder reads its field from the dataset and offers its
  // features under its name, which the contract check holds the later tables to.
  void add_text_encoder(const ConfigNode& table, const std::string& where, const std::string& name,
                        const std::string& field, std::shared_ptr<TextEncoder> encoder) {
    Pipeline& p = built_.pipeline;
    if (p.backbone && encoder->output_dim() != p.backbone->embedding_dim()) {
      diagnostics_.error(
          table.location(),
          fmt::format("{} ({}) gives features of {} values, and the backbone's embedding has {}: "
                      "text features live in φ's space (set its output_dim to {})",
                      where, encoder->label(), encoder->output_dim(), p.backbone->embedding_dim(),
                      p.backbone->embedding_dim()));
      return;
    }
    Contract contract = encoder->contract();
    contract.needs.push_back({Resource::ItemText, field});
    contract.provides.push_back({Resource::TextFeatures, name});
    encoder->set_contract(std::move(contract));
    p.text_encoders.push_back({name, field, std::move(encoder)});
  }

  const ConfigNode& root_;
  const Registry& registry_;
  Diagnostics& diagnostics_;
  const bool recorded_;  // a run's resolved.toml: it has a [provenance] table
  Facts facts_;
  BuiltPipeline built_;
  ConfigNode resolved_;
};

}  // namespace

BuiltPipeline build_components(const ConfigNode& root, const fs::path& source,
                               const Registry& registry, Diagnostics& diagnostics) {
  return Builder(root, source, registry, diagnostics).build();
}

}  // namespace wscsl::host
