#include "contracts.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "host_keys.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

using Offer = std::pair<Resource, std::string>;

// The host hands these to the components that declare the need: the triplets' images and the
// reversed scores to losses, the items' images to condition modules.
bool provided_by_host(Resource resource, Kind to) {
  if (resource == Resource::ItemImages) return to == Kind::ConditionModule;
  return resource == Resource::ReversedScores || resource == Resource::TrainingImages;
}

// As aligned_embeddings() without a published alignment: embedding k for condition k of a
// supervised module with one per condition, or the one embedding of a module that has one.
bool identity_alignment_applies(const Pipeline& p) {
  const std::int64_t embeddings = p.condition_module->num_embeddings();
  return embeddings == 1 || (p.condition_module->supervision() == Supervision::Conditioned &&
                             embeddings == p.dataset->info().num_conditions());
}

std::string table_of(Kind kind) {
  switch (kind) {
    case Kind::Dataset:
      return "[dataset]";
    case Kind::Backbone:
      return "[backbone]";
    case Kind::TextEncoder:
      return "[[text_encoders]]";
    case Kind::ConditionModule:
      return "[condition_module]";
    case Kind::Loss:
      return "[[losses]]";
    case Kind::Evaluator:
      return "[[evaluators]]";
  }
  return "";
}

// The types of `kind` whose contract with default options provides the resource.
std::vector<std::string> providers(Kind kind, Resource resource, const std::string& name,
                                   const Registry& registry) {
  std::vector<std::string> types;
  for (const RegisteredComponent* c : registry.of_kind(kind))
    if (c->factory.default_contract.provides_resource(resource, name))
      types.push_back(c->factory.type);
  return types;
}

// "add [[evaluators]] type = "alignment" before line 29", or the types that could be used instead.
std::vector<std::string> remedies(const Need& need, const ComponentSite& site,
                                  const Registry& registry) {
  std::vector<std::string> notes;
  if (need.resource == Resource::TextFeatures)
    notes.push_back(fmt::format(
        "add [[text_encoders]] name = \"{}\" (with the dataset text field it reads and its type) "
        "before line {}",
        need.name, site.location.line));
  for (Kind kind : kAllKinds) {
    const std::vector<std::string> types = providers(kind, need.resource, need.name, registry);
    if (types.empty()) continue;
    if (kind == Kind::Loss || kind == Kind::Evaluator)
      notes.push_back(fmt::format("add {} type = \"{}\" before line {}", table_of(kind),
                                  types.front(), site.location.line));
    else
      notes.push_back(
          fmt::format("a {} type that provides it: {}", table_of(kind), join(types, ", ")));
  }
  if (need.met_by_conditioned_module)
    notes.push_back(
        "or use a conditioned condition module with one embedding per condition, or one with "
        "a single embedding");
  return notes;
}

// The resolved table of the component at `site` ("[condition_module]", "[losses.1]"), or null.
const ConfigNode* resolved_table(const ConfigNode& resolved, const ComponentSite& site) {
  if (place_of(site.kind) == TablePlace::Single)
    return resolved.find(site.where.substr(1, site.where.size() - 2));
  const std::string inner = site.where.substr(1, site.where.size() - 2);
  const auto dot = inner.rfind('.');
  const ConfigNode* list = resolved.find(inner.substr(0, dot));
  const std::size_t index = std::stoul(inner.substr(dot + 1));
  return list && list->is_array() && index < list->items().size() ? &list->items()[index] : nullptr;
}

// Where a component before `site` would provide what `need` names with another value of one of
// its enumerated options (asen_pp's aux terms with stage = "joint"): the key to set, as
// `--set` writes it, and where.
std::vector<std::string> option_remedies(const Need& need, const ComponentSite& site,
                                         const BuiltPipeline& built, const Registry& registry) {
  std::vector<std::string> notes;
  for (const ComponentSite& earlier : built.sites) {
    if (&earlier == &site) break;
    const ConfigNode* table = resolved_table(built.pipeline.resolved, earlier);
    const ConfigNode* type = table ? table->find("type") : nullptr;
    const RegisteredComponent* entry =
        type && type->is_string() ? registry.find(earlier.kind, type->as_string()) : nullptr;
    if (!entry) continue;
    for (const FieldDescription& field : entry->factory.schema.fields) {
      const ConfigNode* value = table->find(field.name);
      for (const std::string& choice : field.choices) {
        if (value && value->is_string() && value->as_string() == choice) continue;
        ConfigNode changed = *table;
        changed.set(field.name, ConfigNode::string(choice));
        Diagnostics quiet;
        BindScope scope;
        scope.diagnostics = &quiet;
        scope.table = earlier.where;
        scope.host_keys = host_key_names(earlier.kind, place_of(earlier.kind));
        const std::shared_ptr<const void> options = entry->factory.bind(changed, scope);
        if (quiet.has_errors() || !scope.missing_facts.empty()) continue;
        if (!entry->factory.contract(options.get()).provides_resource(need.resource, need.name))
          continue;
        const std::string key =
            earlier.where.substr(1, earlier.where.size() - 2) + "." + field.name;
        notes.push_back(fmt::format(
            "set {} = \"{}\" ({} at line {}): {} provides what is needed only with that value", key,
            choice, earlier.where, earlier.location.line, earlier.described));
      }
    }
  }
  return notes;
}

// An item type an option names (fill_in_the_blank's `types`) that the dataset does not have.
void check_item_type(const std::string& type, const ComponentSite& site,
                     const std::vector<std::string>& types, Diagnostics& diagnostics) {
  // A dataset without types has no outfits either: the evaluator's need of them says so.
  if (types.empty() || std::find(types.begin(), types.end(), type) != types.end()) return;
  std::vector<std::string> notes;
  if (const std::string suggestion = closest_match(type, types); !suggestion.empty())
    notes.push_back(fmt::format("did you mean '{}'?", suggestion));
  notes.push_back("the dataset's item types: " + join(types, ", "));
  diagnostics.error(site.location,
                    fmt::format("{} ({}) names the item type '{}', which the dataset does not have",
                                site.where, site.described, type),
                    notes);
}

// A component that needs the backbone's feature map, in a pipeline whose backbone provides none:
// one sentence naming both, and the backbones that do.
void refuse_missing_feature_map(const ComponentSite& site, const ComponentSite& backbone,
                                const Registry& registry, Diagnostics& diagnostics) {
  const std::vector<std::string> types =
      providers(Kind::Backbone, Resource::FeatureMap, "", registry);
  diagnostics.error(
      site.location,
      fmt::format("{} ({}) needs {}, and {} ({}) provides none", site.where, site.described,
                  describe_resource(Resource::FeatureMap, ""), backbone.where, backbone.described),
      {fmt::format("use a [backbone] type that provides it: {}",
                   types.empty() ? std::string("none is registered") : join(types, ", "))});
}

// The notes of an unmet need: an option of a component already in the pipeline first.
std::vector<std::string> with_option_remedies(std::vector<std::string> notes,
                                              std::vector<std::string> options) {
  options.insert(options.end(), notes.begin(), notes.end());
  return options;
}

const ComponentSite* backbone_of(const std::vector<ComponentSite>& sites) {
  for (const ComponentSite& site : sites)
    if (site.kind == Kind::Backbone) return &site;
  return nullptr;
}

}  // namespace

void report_missing_facts(const ComponentSite& site, const Contract& contract,
                          const std::vector<std::string>& missing,
                          const std::vector<ComponentSite>& earlier, const Registry& registry,
                          Diagnostics& diagnostics) {
  if (diagnostics.has_errors()) return;
  const ComponentSite* backbone = backbone_of(earlier);
  if (backbone && contract.needs_resource(Resource::FeatureMap) &&
      !backbone->component->contract().provides_resource(Resource::FeatureMap, ""))
    return refuse_missing_feature_map(site, *backbone, registry, diagnostics);
  diagnostics.error(site.location,
                    fmt::format("{} ({}) takes {}, which no earlier table establishes", site.where,
                                site.described, join(missing, ", ")));
}

void check_contracts(const BuiltPipeline& built, const Registry& registry,
                     Diagnostics& diagnostics) {
  const Pipeline& p = built.pipeline;
  if (!p.dataset || !p.condition_module) return;  // already reported
  std::set<Offer> offered;
  const ComponentSite* backbone = nullptr;
  for (const ComponentSite& site : built.sites) {
    if (site.kind == Kind::Backbone) backbone = &site;
    const Contract& contract = site.component->contract();
    std::vector<std::string> unmet;  // described, in the contract's order
    std::vector<std::string> notes;  // the remedies of every unmet need, once each
    for (const Need& need : contract.needs) {
      if (need.resource == Resource::ItemType) {
        check_item_type(need.name, site, p.dataset->info().item_types, diagnostics);
        continue;
      }
      // Held against the loaded splits (check_splits), not against the other components.
      if (is_split_content(need.resource)) continue;
      if (offered.count({need.resource, need.name}) || provided_by_host(need.resource, site.kind))
        continue;
      if (need.met_by_conditioned_module && identity_alignment_applies(p)) continue;
      if (need.resource == Resource::FeatureMap && backbone) {
        refuse_missing_feature_map(site, *backbone, registry, diagnostics);
        continue;
      }
      unmet.push_back(describe_resource(need.resource, need.name));
      for (std::string& note : with_option_remedies(remedies(need, site, registry),
                                                    option_remedies(need, site, built, registry)))
        if (std::find(notes.begin(), notes.end(), note) == notes.end())
          notes.push_back(std::move(note));
    }
    // One sentence for every need of the component that nothing meets (the five aux terms of
    // asen_pp_joint have one cause).
    if (!unmet.empty()) {
      const std::string last = unmet.back();
      unmet.pop_back();
      const std::string needs = unmet.empty() ? last : join(unmet, ", ") + " and " + last;
      diagnostics.error(site.location,
                        fmt::format("{} ({}) needs {}, which no component before it provides",
                                    site.where, site.described, needs),
                        notes);
    }
    for (const Provision& provision : contract.provides)
      offered.insert({provision.resource, provision.name});
  }
}

void check_select_metric(const Pipeline& pipeline, const ConfigNode& root,
                         Diagnostics& diagnostics) {
  const std::string& metric = pipeline.trainer.select_metric;
  if (metric.empty() || !pipeline.dataset) return;
  std::vector<std::string> names;
  for (const DeclaredMetric& m : declared_metrics(pipeline))
    names.push_back(m.name);
  if (std::find(names.begin(), names.end(), metric) != names.end()) return;
  const ConfigNode* trainer = root.find("trainer");
  const ConfigNode* value = trainer ? trainer->find("select_metric") : nullptr;
  std::vector<std::string> notes;
  if (const std::string suggestion = closest_match(metric, names); !suggestion.empty())
    notes.push_back(fmt::format("did you mean '{}'?", suggestion));
  notes.push_back("the evaluators declare: " +
                  (names.empty() ? std::string("no metrics") : join(names, ", ")));
  diagnostics.error(value ? value->location() : SourceLocation{root.location().file},
                    fmt::format("[trainer] 'select_metric' = \"{}\" is not a metric of the "
                                "pipeline's evaluators (\"<evaluator name>/<metric>\")",
                                metric),
                    notes);
}

}  // namespace wscsl::host
