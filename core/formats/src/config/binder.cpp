#include "wscsl/config/binder.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "wscsl/util/text.hpp"

namespace wscsl {

void FieldChecker::error(const std::string& field, const std::string& message) {
  const ConfigMember* m = table_.find_member(field);
  const SourceLocation where = m ? m->value.location() : table_.location();
  scope_.diagnostics->error(where, fmt::format("{} '{}': {}", scope_.table, field, message));
}

namespace schema_detail {
namespace {

std::string with_article(const std::string& type_name) {
  const bool vowel =
      !type_name.empty() && std::string("aeiou").find(type_name[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + type_name;
}

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
                                         f.range_text(), value.repr()));
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

// The range, finiteness and choices of a value (of each item of a list).
bool check_constraints(const FieldDescription& field, const ConfigNode& value, BindScope& scope) {
  if (value.is_array()) {
    for (const ConfigNode& item : value.items())
      if (!check_scalar(field, item, scope)) return false;
    return true;
  }
  return check_scalar(field, value, scope);
}

void report_unknown_key(const ErasedSchema& schema, const ConfigMember& member, BindScope& scope) {
  std::vector<std::string> valid = scope.host_keys;
  for (const ErasedField& f : schema.fields)
    valid.push_back(f.description.name);
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

// A value `assign` refused: of the wrong type, or a string (or, where the field reads them, an
// integer) in none of a Spelling's forms.
void report_unassigned(const ErasedField& field, const ConfigNode& value, BindScope& scope) {
  if (!field.forms.empty() && (value.is_string() || (field.integer_forms && value.is_integer())))
    report_unaccepted_form(field.description, field.forms, value, scope);
  else
    report_wrong_type(field.description, value, scope);
}

void report_missing(const FieldDescription& field, const ConfigNode& table, BindScope& scope) {
  scope.diagnostics->error(table.location(),
                           fmt::format("{} is missing required key '{}' ({}: {})", scope.table,
                                       field.name, field.type_name, field.doc));
}

// An option written where the other settings make it inert (FieldBuilder::only_when).
void report_inert(const ErasedField& field, const ConfigNode& value, BindScope& scope) {
  const std::string& condition = field.description.applies_when;
  const std::string message =
      fmt::format("{} '{}' = {} has no effect: it is read only with {}", scope.table,
                  field.description.name, value.repr(), condition);
  const std::vector<std::string> notes = {fmt::format("remove it, or set {}", condition)};
  switch (field.inert) {
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

bool is_host_key(const BindScope& scope, const std::string& key) {
  for (const std::string& k : scope.host_keys)
    if (k == key) return true;
  return false;
}

bool read_by(const ErasedField& field, const void* options) {
  return !field.applies || field.applies(options);
}

std::size_t index_of(const ErasedSchema& schema, const std::string& name) {
  for (std::size_t i = 0; i < schema.fields.size(); ++i)
    if (schema.fields[i].description.name == name) return i;
  return schema.fields.size();
}

// Binds one key written in the table to its field.
void bind_written(const ErasedField& field, const ConfigMember& member, BindScope& scope,
                  void* options) {
  const FieldDescription& d = field.description;
  const ConfigNode value = d.is_path ? resolve_path(member.value) : member.value;
  if (!field.assign(options, value)) {
    report_unassigned(field, member.value, scope);
    return;
  }
  if (!check_constraints(d, member.value, scope)) return;
  if (d.derived_from.empty() || !scope.facts) return;
  if (const ConfigNode* fact = scope.facts->find(d.derived_from))
    if (*fact != value) report_disagreement(d, member.value, *fact, scope);
}

// Fills a field the table leaves out from its fact, or reports it as required.
void bind_unwritten(const ErasedField& field, const ConfigNode& table, BindScope& scope,
                    void* options) {
  const FieldDescription& d = field.description;
  const std::string& fact_name = !d.derived_from.empty() ? d.derived_from : d.default_from;
  const ConfigNode* fact =
      (!fact_name.empty() && scope.facts) ? scope.facts->find(fact_name) : nullptr;
  if (fact)
    field.assign(options, *fact);
  else if (!fact_name.empty())
    scope.missing_facts.push_back(d.name + " from " + fact_name);
  else if (d.required)
    report_missing(d, table, scope);
}

}  // namespace

SchemaDescription describe(const ErasedSchema& schema) {
  SchemaDescription d;
  d.doc = schema.doc;
  for (const ErasedField& f : schema.fields)
    d.fields.push_back(f.description);
  return d;
}

void bind(const ErasedSchema& schema, const ConfigNode& table, BindScope& scope, void* options) {
  const std::size_t errors_before = scope.diagnostics->error_count();
  std::vector<bool> written(schema.fields.size(), false);
  for (const ConfigMember& member : table.members()) {
    if (is_host_key(scope, member.key)) continue;
    const std::size_t i = index_of(schema, member.key);
    if (i == schema.fields.size()) {
      report_unknown_key(schema, member, scope);
      continue;
    }
    written[i] = true;
    bind_written(schema.fields[i], member, scope, options);
  }
  for (std::size_t i = 0; i < schema.fields.size(); ++i)
    if (!written[i]) bind_unwritten(schema.fields[i], table, scope, options);
  if (scope.diagnostics->error_count() != errors_before || !scope.missing_facts.empty()) return;
  FieldChecker checker(table, scope);
  for (const auto& rule : schema.checks)
    rule(options, checker);
  if (scope.recorded) return;
  for (std::size_t i = 0; i < schema.fields.size(); ++i) {
    const ErasedField& field = schema.fields[i];
    if (written[i] && !read_by(field, options))
      report_inert(field, table.find_member(field.description.name)->value, scope);
  }
}

ConfigNode to_config(const ErasedSchema& schema, const void* options) {
  ConfigNode table = ConfigNode::table();
  for (const ErasedField& f : schema.fields) {
    if (!read_by(f, options)) continue;
    if (auto v = f.get(options)) table.set(f.description.name, std::move(*v));
  }
  return table;
}

bool read_choice(const ConfigNode& node, const std::vector<std::string>& spellings,
                 std::optional<std::size_t>& chosen) {
  if (!node.is_string()) return false;
  chosen.reset();
  for (std::size_t i = 0; i < spellings.size() && !chosen; ++i)
    if (node.as_string() == spellings[i]) chosen = i;
  return true;
}

bool read_choices(const ConfigNode& node, const std::vector<std::string>& spellings,
                  std::vector<std::size_t>& chosen) {
  if (!node.is_array()) return false;
  std::vector<std::size_t> read;
  for (const ConfigNode& item : node.items()) {
    std::optional<std::size_t> one;
    if (!read_choice(item, spellings, one)) return false;
    if (one) read.push_back(*one);
  }
  chosen = std::move(read);
  return true;
}

bool read_spelled(const ConfigNode& node, bool integers,
                  const std::function<bool(const std::string&)>& parse) {
  if (integers && node.is_integer()) return parse(std::to_string(node.as_integer()));
  return node.is_string() && parse(node.as_string());
}

ConfigNode spelled_node(const std::string& spelling) {
  std::int64_t value = 0;
  const char* end = spelling.data() + spelling.size();
  const auto [stop, error] = std::from_chars(spelling.data(), end, value);
  if (!spelling.empty() && error == std::errc() && stop == end && std::to_string(value) == spelling)
    return ConfigNode::integer(value);
  return ConfigNode::string(spelling);
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
