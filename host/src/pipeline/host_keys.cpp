#include "host_keys.hpp"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "wscsl/util/text.hpp"

namespace wscsl::host {

TablePlace place_of(Kind kind) {
  switch (kind) {
    case Kind::Dataset:
    case Kind::Backbone:
    case Kind::ConditionModule:
      return TablePlace::Single;
    case Kind::TextEncoder:
    case Kind::Loss:
    case Kind::Evaluator:
      return TablePlace::ListEntry;
  }
  return TablePlace::Single;
}

Schema<HostKeys> host_key_schema(Kind kind, TablePlace place) {
  Schema<HostKeys> s("Keys the host reads from every component table.");
  s.field("type", &HostKeys::type, "The component type.").required();
  if (kind == Kind::Loss)
    s.field("weight", &HostKeys::weight, "Factor of this loss's terms in the total (host key).")
        .min(0.0);
  if (kind == Kind::TextEncoder) {
    s.field("field", &HostKeys::field,
            "The dataset's text field this encoder reads, e.g. \"title\" (host key).")
        .required();
    s.field("name", &HostKeys::name,
            "How condition modules and losses refer to this encoder's features, lower_snake_case "
            "(host key; default: the field).");
  } else if (place == TablePlace::ListEntry) {
    s.field("name", &HostKeys::name,
            "Prefix of this entry's metrics and log terms, lower_snake_case (host key; default: "
            "the type).");
  }
  if (place == TablePlace::ListEntry) {
    s.check([](const HostKeys& k, FieldChecker& check) {
      static const std::regex valid("[a-z][a-z0-9_]*");
      if (k.name && !std::regex_match(*k.name, valid))
        check.error("name", "must be lower_snake_case text");
    });
  }
  return s;
}

std::vector<std::string> host_key_names(Kind kind, TablePlace place) {
  return host_key_schema(kind, place).description().field_names();
}

HostKeys bind_host_keys(const ConfigNode& table, Kind kind, TablePlace place, BindScope& scope) {
  const std::vector<std::string> names = host_key_names(kind, place);
  ConfigNode own = ConfigNode::table(table.location());
  for (const ConfigMember& m : table.members())
    if (std::find(names.begin(), names.end(), m.key) != names.end()) own.members().push_back(m);
  return host_key_schema(kind, place).bind(own, scope);
}

void report_unknown_type(Kind kind, const ConfigNode& type, const Registry& registry,
                         Diagnostics& diagnostics) {
  std::vector<std::string> notes;
  const std::vector<std::string> names = registry.type_names(kind);
  const std::string suggestion = closest_match(type.as_string(), names);
  if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}'?", suggestion));
  std::vector<std::string> described;
  for (const RegisteredComponent* c : registry.of_kind(kind))
    described.push_back(
        c->factory.type +
        (c->plugin ? fmt::format(" ({} {})", c->plugin->name, c->plugin->version) : std::string()));
  notes.push_back(
      fmt::format("available {} types: {}", kind_name(kind),
                  described.empty() ? "none (no plugin provides one)" : join(described, ", ")));
  for (const RefusedPlugin& r : registry.refused())
    notes.push_back("refused plugin: " + r.reason);
  diagnostics.error(type.location(),
                    fmt::format("unknown {} type {}", kind_name(kind), type.repr()), notes);
}

}  // namespace wscsl::host
