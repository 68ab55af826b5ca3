// `wscsl plugins` and `wscsl describe`: what is installed, and every option of a component.
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "pipeline.hpp"
#include "run_directory.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

std::string json_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items)
    quoted.push_back(json_string(s));
  return "[" + join(quoted, ", ") + "]";
}

std::string default_text(const FieldDescription& f) {
  if (!f.derived_from.empty()) return "from " + f.derived_from;
  if (f.default_value) return f.default_value->repr();
  if (!f.default_from.empty()) return "from " + f.default_from;
  return f.required ? "(required)" : "(unset)";
}

void print_schema_text(const std::string& title, const SchemaDescription& schema,
                       const std::vector<std::string>& host_keys) {
  fmt::print("{}\n\n{}\n\noptions:\n", title, schema.doc);
  for (const FieldDescription& f : schema.fields) {
    fmt::print("  {} ({}, default {})\n", f.name, f.type_name, default_text(f));
    if (const std::string c = f.constraint_text(); !c.empty()) fmt::print("      {}\n", c);
    fmt::print("      {}\n", f.doc);
  }
  for (const std::string& k : host_keys)
    fmt::print("  {}\n", k);
}

void print_schema_json(const std::string& kind, const std::string& type, const std::string& plugin,
                       const SchemaDescription& schema) {
  fmt::print(
      "{{\n  \"kind\": {},\n  \"type\": {},\n  \"plugin\": {},\n  \"doc\": {},\n  \"options\": [",
      json_string(kind), json_string(type), json_string(plugin), json_string(schema.doc));
  for (std::size_t i = 0; i < schema.fields.size(); ++i) {
    const FieldDescription& f = schema.fields[i];
    std::string entry = fmt::format(
        "{}\n    {{\"name\": {}, \"type\": {}, \"default\": {}, \"required\": {}, \"doc\": {}",
        i ? "," : "", json_string(f.name), json_string(f.type_name), json_string(default_text(f)),
        f.required ? "true" : "false", json_string(f.doc));
    if (f.min)
      entry += fmt::format(", \"min\": {}, \"min_exclusive\": {}", json_number(*f.min),
                           f.min_exclusive ? "true" : "false");
    if (f.max)
      entry += fmt::format(", \"max\": {}, \"max_exclusive\": {}", json_number(*f.max),
                           f.max_exclusive ? "true" : "false");
    if (!f.choices.empty()) entry += ", \"choices\": " + json_list(f.choices);
    if (!f.derived_from.empty()) entry += ", \"derived_from\": " + json_string(f.derived_from);
    if (!f.default_from.empty()) entry += ", \"default_from\": " + json_string(f.default_from);
    fmt::print("{}}}", entry);
  }
  fmt::print("\n  ]\n}}\n");
}

// The options table of a plugin README (checked against the README by the docs test).
void print_schema_markdown(const SchemaDescription& schema, std::optional<Kind> kind) {
  fmt::print("| option | type | default | allowed | description |\n|---|---|---|---|---|\n");
  auto escape = [](std::string s) {
    for (std::size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2))
      s.replace(at, 1, "\\|");
    return s;
  };
  if (kind) fmt::print("| `type` | string | (required) | | The component type. |\n");
  if (kind == Kind::Loss)
    fmt::print(
        "| `weight` | float | 1.0 | range [0, inf) | Factor of this loss's terms in the "
        "total (host key). |\n");
  if (kind == Kind::Loss || kind == Kind::Evaluator)
    fmt::print(
        "| `name` | string | the type | | Prefix of this entry's metrics and log terms "
        "(host key). |\n");
  for (const FieldDescription& f : schema.fields)
    fmt::print("| `{}` | {} | {} | {} | {} |\n", f.name, f.type_name, escape(default_text(f)),
               escape(f.constraint_text()), escape(f.doc));
}

std::vector<std::string> host_key_lines(Kind kind) {
  std::vector<std::string> lines = {"type (string, required)\n      The component type."};
  if (kind == Kind::Loss)
    lines.push_back(
        "weight (float, default 1.0, range [0, inf))\n      Factor of this loss's "
        "terms in the total (host key).");
  if (kind == Kind::Loss || kind == Kind::Evaluator)
    lines.push_back(
        "name (string, default: the type)\n      Prefix of this entry's metrics and "
        "log terms (host key).");
  return lines;
}

}  // namespace

int run_plugins(const GlobalOptions& global, bool json) {
  Session session(global);
  const Registry& r = session.registry();
  if (json) {
    fmt::print("{{\n  \"plugins\": [");
    for (std::size_t i = 0; i < r.plugins().size(); ++i) {
      const PluginRecord& p = *r.plugins()[i];
      fmt::print(
          "{}\n    {{\"name\": {}, \"version\": {}, \"file\": {}, \"description\": {}, "
          "\"types\": {}}}",
          i ? "," : "", json_string(p.name), json_string(p.version), json_string(p.file),
          json_string(p.description), json_list(p.types));
    }
    fmt::print("\n  ],\n  \"refused\": [");
    for (std::size_t i = 0; i < r.refused().size(); ++i)
      fmt::print("{}\n    {{\"file\": {}, \"reason\": {}}}", i ? "," : "",
                 json_string(r.refused()[i].file), json_string(r.refused()[i].reason));
    fmt::print("\n  ]\n}}\n");
    return 0;
  }
  if (r.plugins().empty()) fmt::print("no plugins found\n");
  for (const auto& p : r.plugins()) {
    fmt::print("{} {}  {}\n    {}\n    provides: {}\n", p->name, p->version, p->file,
               p->description, join(p->types, ", "));
  }
  for (const RefusedPlugin& refused : r.refused())
    fmt::print("refused: {}\n", refused.reason);
  return 0;
}

int run_describe(const GlobalOptions& global, const std::string& what, DescribeFormat format) {
  if (what == "trainer") {
    const SchemaDescription schema = TrainerOptions::schema().description();
    if (format == DescribeFormat::Json)
      print_schema_json("host", "trainer", "wscsl", schema);
    else if (format == DescribeFormat::Markdown)
      print_schema_markdown(schema, std::nullopt);
    else
      print_schema_text("[trainer] (host)", schema, {});
    return 0;
  }
  const auto slash = what.find('/');
  Kind kind;
  if (slash == std::string::npos || !parse_kind(what.substr(0, slash), kind)) {
    Diagnostics d;
    d.error({}, fmt::format("cannot describe '{}'", what),
            {"write <kind>/<type>, e.g. condition_module/discovernet, or 'trainer'",
             "kinds: dataset, backbone, condition_module, loss, evaluator"});
    throw ConfigError(d);
  }
  const std::string type = what.substr(slash + 1);
  Session session(global);
  const RegisteredComponent* entry = session.registry().find(kind, type);
  if (!entry) {
    std::vector<std::string> notes;
    const auto names = session.registry().type_names(kind);
    if (auto s = closest_match(type, names); !s.empty())
      notes.push_back(fmt::format("did you mean '{}'?", s));
    notes.push_back(fmt::format("available {} types: {}", kind_name(kind),
                                names.empty() ? "none" : join(names, ", ")));
    Diagnostics d;
    d.error({}, fmt::format("no {} type '{}' is installed", kind_name(kind), type), notes);
    throw ConfigError(d);
  }
  const std::string plugin =
      entry->plugin ? fmt::format("{} {}", entry->plugin->name, entry->plugin->version) : "host";
  if (format == DescribeFormat::Json) {
    print_schema_json(std::string(kind_name(kind)), type, plugin, entry->factory.schema);
  } else if (format == DescribeFormat::Markdown) {
    print_schema_markdown(entry->factory.schema, kind);
  } else {
    print_schema_text(fmt::format("{} '{}' (plugin {})", kind_name(kind), type, plugin),
                      entry->factory.schema, host_key_lines(kind));
  }
  return 0;
}

}  // namespace wscsl::host
