#include "describe_command.hpp"

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pipeline/host_keys.hpp"
#include "pipeline/pipeline.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

std::string default_text(const FieldDescription& f) {
  if (!f.derived_from.empty()) return "from " + f.derived_from;
  if (!f.default_from.empty()) return "from " + f.default_from;
  if (f.default_value) return f.default_value->repr();
  return f.required ? "(required)" : "(unset)";
}

// "default 0.2", "default from dataset.num_conditions", or "required" for a key without one.
std::string default_clause(const FieldDescription& f) {
  const bool has_default = !f.derived_from.empty() || !f.default_from.empty() || f.default_value;
  return f.required && !has_default ? "required" : "default " + default_text(f);
}

void print_fields_text(const std::vector<FieldDescription>& fields) {
  for (const FieldDescription& f : fields) {
    fmt::print("  {} ({}, {})\n", f.name, f.type_name, default_clause(f));
    if (const std::string c = f.constraint_text(); !c.empty()) fmt::print("      {}\n", c);
    for (std::size_t i = 0; i < f.choice_docs.size(); ++i)
      fmt::print("        {}: {}\n", f.choices[i], f.choice_docs[i]);
    fmt::print("      {}\n", f.doc);
  }
}

// "provides the aux term 'mask_l1' ...; needs ...; metrics `a`, `b` (bench column "GR")".
std::vector<std::string> contract_lines(const Contract& contract) {
  std::vector<std::string> lines;
  for (const Provision& p : contract.provides)
    lines.push_back("provides " + describe_resource(p.resource, p.name));
  for (const Need& n : contract.needs)
    lines.push_back("needs " + describe_resource(n.resource, n.name) +
                    (n.met_by_conditioned_module
                         ? " (met without it by a conditioned module with one embedding per "
                           "condition, or a module with one embedding)"
                         : ""));
  std::vector<std::string> metrics;
  for (const MetricSpec& m : contract.metrics)
    metrics.push_back("`" + m.name + "`" +
                      (m.column.empty() ? "" : " (bench column \"" + m.column + "\")"));
  if (!metrics.empty()) lines.push_back("reports the metrics " + join(metrics, ", "));
  for (const RowsNeed& r : contract.table_rows)
    lines.push_back(
        fmt::format("needs at least {} images in each split it evaluates ({})", r.rows, r.because));
  return lines;
}

void print_schema_text(const std::string& title, const SchemaDescription& schema,
                       const std::optional<SchemaDescription>& host_keys,
                       const Contract& contract) {
  fmt::print("{}\n\n{}\n\noptions:\n", title, schema.doc);
  print_fields_text(schema.fields);
  if (host_keys) {
    fmt::print("host keys:\n");
    print_fields_text(host_keys->fields);
  }
  const std::vector<std::string> lines = contract_lines(contract);
  if (!lines.empty()) fmt::print("contract:\n");
  for (const std::string& line : lines)
    fmt::print("  {}\n", line);
}

using Json = nlohmann::ordered_json;

Json contract_json(const Contract& contract) {
  Json provides = Json::array(), needs = Json::array(), metrics = Json::array(),
       table_rows = Json::array();
  for (const Provision& p : contract.provides)
    provides.push_back({{"resource", resource_name(p.resource)}, {"name", p.name}});
  for (const Need& n : contract.needs)
    needs.push_back({{"resource", resource_name(n.resource)},
                     {"name", n.name},
                     {"met_by_conditioned_module", n.met_by_conditioned_module}});
  for (const MetricSpec& m : contract.metrics)
    metrics.push_back({{"name", m.name}, {"column", m.column}});
  for (const RowsNeed& r : contract.table_rows)
    table_rows.push_back({{"rows", r.rows}, {"because", r.because}});
  return {
      {"provides", provides}, {"needs", needs}, {"metrics", metrics}, {"table_rows", table_rows}};
}

void print_schema_json(const std::string& kind, const std::string& type, const std::string& plugin,
                       const SchemaDescription& schema, const Contract& contract) {
  Json options = Json::array();
  for (const FieldDescription& f : schema.fields) {
    Json entry = {{"name", f.name},
                  {"type", f.type_name},
                  {"default", default_text(f)},
                  {"required", f.required},
                  {"doc", f.doc}};
    if (f.min) entry.update({{"min", *f.min}, {"min_exclusive", f.min_exclusive}});
    if (f.max) entry.update({{"max", *f.max}, {"max_exclusive", f.max_exclusive}});
    if (!f.choices.empty()) entry["choices"] = f.choices;
    if (!f.choice_docs.empty()) entry["choice_docs"] = f.choice_docs;
    if (!f.derived_from.empty()) entry["derived_from"] = f.derived_from;
    if (!f.default_from.empty()) entry["default_from"] = f.default_from;
    if (!f.applies_when.empty()) entry["applies_when"] = f.applies_when;
    options.push_back(std::move(entry));
  }
  const Json described = {{"kind", kind},       {"type", type},
                          {"plugin", plugin},   {"doc", schema.doc},
                          {"options", options}, {"contract", contract_json(contract)}};
  fmt::print("{}\n", described.dump(2));
}

// The options table of a plugin README (checked against the README by the docs test).
void print_schema_markdown(const SchemaDescription& schema,
                           const std::optional<SchemaDescription>& host_keys,
                           const Contract& contract) {
  fmt::print("| option | type | default | allowed | description |\n|---|---|---|---|---|\n");
  auto escape = [](std::string s) {
    for (std::size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2))
      s.replace(at, 1, "\\|");
    return s;
  };
  std::vector<FieldDescription> rows =
      host_keys ? host_keys->fields : std::vector<FieldDescription>{};
  rows.insert(rows.end(), schema.fields.begin(), schema.fields.end());
  for (const FieldDescription& f : rows)
    fmt::print("| `{}` | {} | {} | {} | {} |\n", f.name, f.type_name, escape(default_text(f)),
               escape(f.constraint_text()), escape(f.doc));
  const std::vector<std::string> lines = contract_lines(contract);
  if (!lines.empty()) fmt::print("\nContract: {}.\n", join(lines, "; "));
}

SchemaDescription host_keys_of(Kind kind) {
  return host_key_schema(kind, place_of(kind)).description();
}

enum class DescribeFormat { Text, Json, Markdown };

int describe(const GlobalOptions& global, const std::string& what, DescribeFormat format) {
  if (what == "trainer") {
    const SchemaDescription schema = TrainerOptions::description();
    if (format == DescribeFormat::Json)
      print_schema_json("host", "trainer", "wscsl", schema, {});
    else if (format == DescribeFormat::Markdown)
      print_schema_markdown(schema, std::nullopt, {});
    else
      print_schema_text("[trainer] (host)", schema, std::nullopt, {});
    return 0;
  }
  const auto slash = what.find('/');
  Kind kind;
  if (slash == std::string::npos || !parse_kind(what.substr(0, slash), kind)) {
    std::vector<std::string> kinds;
    for (Kind k : kAllKinds)
      kinds.emplace_back(kind_name(k));
    Diagnostics d;
    d.error({}, fmt::format("cannot describe '{}'", what),
            {"write <kind>/<type>, e.g. condition_module/discovernet, or 'trainer'",
             "kinds: " + join(kinds, ", ")});
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
  const Contract& contract = entry->factory.default_contract;
  if (format == DescribeFormat::Json) {
    print_schema_json(std::string(kind_name(kind)), type, plugin, entry->factory.schema, contract);
  } else if (format == DescribeFormat::Markdown) {
    print_schema_markdown(entry->factory.schema, host_keys_of(kind), contract);
  } else {
    print_schema_text(fmt::format("{} '{}' (plugin {})", kind_name(kind), type, plugin),
                      entry->factory.schema, host_keys_of(kind), contract);
  }
  return 0;
}

}  // namespace

DescribeCommand::DescribeCommand(CLI::App& app)
    : Command(app, "describe", "Every option of a component type") {
  CLI::App& c = subcommand();
  c.add_option("what", what_, "<kind>/<type> (e.g. condition_module/discovernet) or 'trainer'")
      ->required();
  c.add_flag("--json", json_, "JSON output");
  c.add_flag("--markdown", markdown_, "The options as a Markdown table");
}

int DescribeCommand::run(const Invocation& invocation) {
  return describe(invocation.global, what_,
                  json_       ? DescribeFormat::Json
                  : markdown_ ? DescribeFormat::Markdown
                              : DescribeFormat::Text);
}

}  // namespace wscsl::host
