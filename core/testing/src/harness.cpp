#include "wscsl/testing/harness.hpp"

#include <fmt/format.h>

#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/runtime/plugin_manager.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::testing {
namespace {

const RegisteredComponent& lookup(Kind kind, const std::string& type) {
  const RegisteredComponent* entry = registry().find(kind, type);
  if (!entry)
    throw Error(fmt::format("no {} type '{}' on WSCSL_PLUGIN_PATH", kind_name(kind), type));
  return *entry;
}

std::shared_ptr<const void> bind(Kind kind, const std::string& type, const std::string& body,
                                 const Facts& facts, Diagnostics& diagnostics) {
  const ConfigNode table = parse_toml(body, "<test snippet>");
  BindScope scope;
  scope.diagnostics = &diagnostics;
  scope.table = fmt::format("[{}]", kind_name(kind));
  scope.component = fmt::format("{} '{}'", kind_name(kind), type);
  scope.facts = &facts;
  auto options = lookup(kind, type).factory.bind(table, scope);
  if (!scope.missing_facts.empty())
    throw Error(
        fmt::format("{} takes {} from facts the test did not establish (see "
                    "wscsl::testing::facts and with_images)",
                    scope.component, join(scope.missing_facts, ", ")));
  return options;
}

}  // namespace

Registry& registry() {
  static Registry* loaded = [] {
    auto* r = new Registry();  // lives as long as the plugins it refers to: the whole process
    PluginManager manager(*r);
    PluginSearch search;
    search.use_defaults = false;
    std::vector<std::string> warnings;
    manager.load(search.directories(warnings), warnings);
    if (!r->refused().empty()) throw PluginError(r->refused().front().reason);
    return r;
  }();
  return *loaded;
}

std::shared_ptr<Component> build_component(Kind kind, const std::string& type,
                                           const std::string& toml_body, const Facts& facts) {
  Diagnostics diagnostics;
  auto options = bind(kind, type, toml_body, facts, diagnostics);
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  return registry().create(lookup(kind, type), options.get(), facts,
                           fmt::format("{} '{}'", kind_name(kind), type));
}

Diagnostics bind_diagnostics(Kind kind, const std::string& type, const std::string& toml_body,
                             const Facts& facts) {
  Diagnostics diagnostics;
  bind(kind, type, toml_body, facts, diagnostics);
  return diagnostics;
}

Facts facts(std::int64_t num_conditions, std::int64_t embedding_dim) {
  Facts f;
  f.set(wscsl::facts::dataset_num_conditions.name, ConfigNode::integer(num_conditions), "the test");
  f.set(wscsl::facts::backbone_embedding_dim.name, ConfigNode::integer(embedding_dim), "the test");
  return f;
}

Facts with_images(Facts base, std::int64_t channels, std::int64_t height, std::int64_t width) {
  base.set(wscsl::facts::dataset_channels.name, ConfigNode::integer(channels), "the test");
  base.set(wscsl::facts::dataset_height.name, ConfigNode::integer(height), "the test");
  base.set(wscsl::facts::dataset_width.name, ConfigNode::integer(width), "the test");
  return base;
}

Facts with_feature_map(Facts base, std::int64_t channels) {
  base.set(wscsl::facts::backbone_feature_map_channels.name, ConfigNode::integer(channels),
           "the test");
  return base;
}

}  // namespace wscsl::testing
