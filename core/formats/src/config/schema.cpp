#include "wscsl/config/schema.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl {

void Facts::set(const std::string& name, ConfigNode value, std::string origin) {
  values_[name] = {std::move(value), std::move(origin)};
}

const ConfigNode* Facts::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second.first;
}

std::string Facts::origin(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string() : it->second.second;
}

std::int64_t Facts::integer(const std::string& name) const {
  const ConfigNode* n = find(name);
  if (!n || !n->is_integer())
    throw Error(fmt::format("internal: fact '{}' was not established as an integer", name));
  return n->as_integer();
}

const std::vector<Fact>& known_facts() {
  static const std::vector<Fact> all = {facts::dataset_num_conditions,
                                        facts::dataset_channels,
                                        facts::dataset_height,
                                        facts::dataset_width,
                                        facts::dataset_text_features,
                                        facts::backbone_embedding_dim,
                                        facts::condition_module_num_embeddings,
                                        facts::condition_module_output_dim};
  return all;
}

bool is_known_fact(const std::string& name) {
  for (const Fact& f : known_facts())
    if (name == f.name) return true;
  return false;
}

std::string nearest_fact(const std::string& name) {
  std::vector<std::string> names;
  for (const Fact& f : known_facts())
    names.push_back(f.name);
  return closest_match(name, names);
}

namespace {

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return ConfigNode::floating(v).repr();
}

std::string with_article(const std::string& type_name) {
  const bool vowel =
      !type_name.empty() && std::string("aeiou").find(type_name[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + type_name;
}

std::string range_text(const FieldDescription& f) {
  if (!f.min && !f.max) return {};
  std::string lo = f.min ? std::string(f.min_exclusive ? "(" : "[") + number_text(*f.min) : "(-inf";
  std::string hi = f.max ? number_text(*f.max) + (f.max_exclusive ? ")" : "]") : "inf)";
  return lo + ", " + hi;
}

}  // namespace

std::string FieldDescription::constraint_text() const {
  std::vector<std::string> parts;
  if (!choices.empty()) parts.push_back("one of: " + join(choices, ", "));
  if (min || max) parts.push_back("range " + range_text(*this));
  if (!applies_when.empty()) parts.push_back("read only with " + applies_when);
  return join(parts, "; ");
}

const FieldDescription* SchemaDescription::find(const std::string& name) const {
  for (const FieldDescription& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> SchemaDescription::field_names() const {
  std::vector<std::string> names;
  for (const FieldDescription& f : fields)
    names.push_back(f.name);
  return names;
}

void FieldChecker::error(const std::string& field, const std::string& message) {
  const ConfigMember* m = table_.find_member(field);
  const SourceLocation where = m ? m->value.location() : table_.location();
  scope_.diagnostics->error(where, fmt::format("{} '{}': {}", scope_.table, field, message));
}

namespace schema_detail {

bool is_host_key(const BindScope& scope, const std::string& key) {
  for (const std::string& k : scope.host_keys)
    if (k == key) return true;
  return false;
}

namespace {

bool in_range(const FieldDescription& f, double v) {
  if (f.min && (f.min_exclusive ? !(v > *f.min) : !(v >= *f.min))) return false;
  if (f.max && (f.max_exclusive ? !(v < *f.max) : !(v <= *f.max))) return false;
  return true;
}

bool check_scalar(const FieldDescription& f, const ConfigNode& value, BindScope& scope) {
  // No option takes an infinite or undefined number; inf would pass a bound like min(0).
  if (value.is_number() && !std::isfinite(value.as_number())) {
    scope.diagnostics->error(
        value.location(),
        fmt::format("{} '{}' must be a finite number, got {}", scope.table, f.name, value.repr()));
    return false;
  }
  if (value.is_number() && (f.min || f.max) && !in_range(f, value.as_number())) {
    scope.diagnostics->error(value.location(),
                             fmt::format("{} '{}' must be in {}, got {}", scope.table, f.name,
                                         range_text(f), value.repr()));
    return false;
  }
  if (!f.choices.empty() && !value.is_array()) {
    const std::string spelled = value.is_string() ? value.as_string() : value.repr();
    for (const std::string& c : f.choices)
      if (c == spelled) return true;
    std::vector<std::string> notes;
    const std::string suggestion = closest_match(spelled, f.choices);
    if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}'?", suggestion));
    notes.push_back("valid choices: " + join(f.choices, ", "));
    scope.diagnostics->error(
        value.location(),
        fmt::format("{} '{}' has no choice {}", scope.table, f.name, value.repr()), notes);
    return false;
  }
  return true;
}

}  // namespace

bool check_constraints(const FieldDescription& field, const ConfigNode& value, BindScope& scope) {
  if (value.is_array()) {
    for (const ConfigNode& item : value.items())
      if (!check_scalar(field, item, scope)) return false;
    return true;
  }
  return check_scalar(field, value, scope);
}

void report_unknown_key(const SchemaDescription& schema, const ConfigMember& member,
                        BindScope& scope) {
  std::vector<std::string> valid = scope.host_keys;
  for (const std::string& name : schema.field_names())
    valid.push_back(name);
  std::vector<std::string> notes;
  const std::string suggestion = closest_match(member.key, valid);
  if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}'?", suggestion));
  notes.push_back("valid keys: " + join(valid, ", "));
  const std::string of = scope.component.empty() ? std::string() : " (" + scope.component + ")";
  scope.diagnostics->error(member.key_location,
                           fmt::format("unknown key '{}' in {}{}", member.key, scope.table, of),
                           notes);
}

void report_wrong_type(const FieldDescription& field, const ConfigNode& value, BindScope& scope) {
  scope.diagnostics->error(
      value.location(),
      fmt::format("{} '{}' expects {}, got {} ({})", scope.table, field.name,
                  with_article(field.type_name), value.describe_type(), value.repr()));
}

void report_unaccepted_form(const FieldDescription& field, const std::vector<std::string>& forms,
                            const ConfigNode& value, BindScope& scope) {
  std::vector<std::string> quoted;
  for (const std::string& form : forms)
    quoted.push_back("\"" + form + "\"");
  const std::string last = quoted.back();
  quoted.pop_back();
  const std::string listed = quoted.empty() ? last : join(quoted, ", ") + " or " + last;
  scope.diagnostics->error(value.location(), fmt::format("{} '{}' must be {}, got {}", scope.table,
                                                         field.name, listed, value.repr()));
}

void report_missing(const FieldDescription& field, const ConfigNode& table, BindScope& scope) {
  scope.diagnostics->error(table.location(),
                           fmt::format("{} is missing required key '{}' ({}: {})", scope.table,
                                       field.name, field.type_name, field.doc));
}

void report_inert(const FieldDescription& field, const ConfigNode& value, Inert severity,
                  BindScope& scope) {
  const std::string message =
      fmt::format("{} '{}' = {} has no effect: it is read only with {}", scope.table, field.name,
                  value.repr(), field.applies_when);
  const std::vector<std::string> notes = {fmt::format("remove it, or set {}", field.applies_when)};
  switch (severity) {
    case Inert::Error:
      scope.diagnostics->error(value.location(), message, notes);
      return;
    case Inert::Warning:
      scope.diagnostics->warning(value.location(), message, notes);
      return;
  }
}

void report_disagreement(const FieldDescription& field, const ConfigNode& value,
                         const ConfigNode& fact, BindScope& scope) {
  const std::string origin = scope.facts ? scope.facts->origin(field.derived_from) : std::string();
  scope.diagnostics->error(
      value.location(),
      fmt::format("{} '{}' = {} disagrees with {} = {}{}", scope.table, field.name, value.repr(),
                  field.derived_from, fact.repr(), origin.empty() ? "" : " (from " + origin + ")"),
      {"remove the key to use the derived value"});
}

ConfigNode resolve_path(const ConfigNode& value) {
  if (value.is_array()) {
    ConfigNode resolved = value;
    for (ConfigNode& item : resolved.items())
      item = resolve_path(item);
    return resolved;
  }
  if (!value.is_string() || value.as_string().empty()) return value;
  std::filesystem::path p(value.as_string());
  if (p.is_relative()) {
    // A path written in a file is relative to that file; one from the command line, to the
    // working directory.
    const SourceLocation& where = value.location();
    const std::filesystem::path base = where.line > 0
                                           ? std::filesystem::absolute(where.file).parent_path()
                                           : std::filesystem::current_path();
    p = base / p;
  }
  ConfigNode resolved = ConfigNode::string(p.lexically_normal().string(), value.location());
  return resolved;
}

}  // namespace schema_detail
}  // namespace wscsl
