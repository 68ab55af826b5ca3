#include "parameter_groups.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

constexpr const char* kKey = "parameter_groups";

std::string table_name(std::size_t group) {
  return fmt::format("[trainer.{}.{}]", kKey, group);
}

// Where prefix `p` of group `g` is written in the [trainer] table, when it is.
SourceLocation prefix_location(const ConfigNode* trainer, std::size_t g, std::size_t p) {
  const ConfigNode* list = trainer ? trainer->find(kKey) : nullptr;
  if (!list || !list->is_array() || g >= list->items().size()) return {};
  const ConfigNode& table = list->items()[g];
  const ConfigNode* prefixes = table.is_table() ? table.find("prefixes") : nullptr;
  if (!prefixes || !prefixes->is_array() || p >= prefixes->items().size()) return table.location();
  return prefixes->items()[p].location();
}

// Every module path that holds a parameter of `names` ("condition_module",
// "condition_module.global_branch", …), in order of first appearance.
std::vector<std::string> module_paths(const std::vector<std::string>& names) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const std::string& name : names)
    for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
      if (seen.insert(name.substr(0, dot)).second) paths.push_back(name.substr(0, dot));
  return paths;
}

// The module paths two components deep ("backbone.stem", "condition_module.global_branch"): the
// level a group names, listed in a message.
std::vector<std::string> second_level(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths)
    if (std::count(path.begin(), path.end(), '.') == 1) out.push_back(path);
  return out;
}

std::string first_few(const std::vector<std::string>& items, std::size_t few) {
  if (items.size() <= few) return join(items, ", ");
  return join(std::vector<std::string>(items.begin(), items.begin() + few), ", ") +
         fmt::format(", … ({} in all)", items.size());
}

}  // namespace

Schema<ParameterGroup> ParameterGroup::schema() {
  using O = ParameterGroup;
  Schema<O> s("Parameters trained at a learning rate of their own.");
  s.field("prefixes", &O::prefixes,
          "Module paths in the model (\"backbone\", \"condition_module.local_branch\", "
          "\"loss_0\") or parameter names: the group holds every trainable parameter named by one "
          "of them, or by one of them and a dot.")
      .required();
  // The optimisers apply it to float32 parameters, as trainer.lr.
  s.field("lr", &O::lr,
          "The group's initial learning rate; trainer.lr_schedule scales it as it scales "
          "trainer.lr.")
      .required()
      .greater_than(0.0)
      .max(std::numeric_limits<float>::max());
  s.check([](const O& o, FieldChecker& check) {
    if (o.prefixes.empty()) check.error("prefixes", "names no module path; name at least one");
  });
  return s;
}

bool under_prefix(const std::string& name, const std::string& prefix) {
  return name.compare(0, prefix.size(), prefix) == 0 &&
         (name.size() == prefix.size() || name[prefix.size()] == '.');
}

std::vector<ParameterGroup> bind_parameter_groups(const ConfigNode& trainer, BindScope& scope) {
  std::vector<ParameterGroup> groups;
  const ConfigNode* list = trainer.find(kKey);
  if (!list) return groups;
  if (!list->is_array()) {
    scope.diagnostics->error(
        list->location(),
        fmt::format("[trainer] '{}' must be an array of tables, written [[trainer.{}]], got {}",
                    kKey, kKey, list->describe_type()));
    return groups;
  }
  const Schema<ParameterGroup> schema = ParameterGroup::schema();
  for (std::size_t i = 0; i < list->items().size(); ++i) {
    const ConfigNode& table = list->items()[i];
    if (!table.is_table()) {
      scope.diagnostics->error(table.location(), fmt::format("{} must be a table, got {}",
                                                             table_name(i), table.describe_type()));
      continue;
    }
    BindScope group_scope;
    group_scope.diagnostics = scope.diagnostics;
    group_scope.recorded = scope.recorded;
    group_scope.table = table_name(i);
    groups.push_back(schema.bind(table, group_scope));
  }
  return groups;
}

ConfigNode parameter_groups_config(const std::vector<ParameterGroup>& groups) {
  const Schema<ParameterGroup> schema = ParameterGroup::schema();
  ConfigNode list = ConfigNode::array();
  for (const ParameterGroup& g : groups)
    list.push_back(schema.to_config(g));
  return list;
}

std::vector<std::size_t> group_of_each(const std::vector<ParameterGroup>& groups,
                                       const std::vector<std::string>& names) {
  std::vector<std::size_t> of(names.size(), groups.size());
  for (std::size_t n = 0; n < names.size(); ++n)
    for (std::size_t g = 0; g < groups.size() && of[n] == groups.size(); ++g)
      for (const std::string& prefix : groups[g].prefixes)
        if (under_prefix(names[n], prefix)) of[n] = g;
  return of;
}

void check_parameter_groups(const std::vector<ParameterGroup>& groups,
                            const std::vector<std::string>& names, const ConfigNode* trainer,
                            Diagnostics& diagnostics) {
  const std::vector<std::string> paths = module_paths(names);
  // The first prefix (group, index) that holds each parameter.
  std::vector<std::pair<std::size_t, std::size_t>> holder(names.size(), {groups.size(), 0});
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t p = 0; p < groups[g].prefixes.size(); ++p) {
      const std::string& prefix = groups[g].prefixes[p];
      const SourceLocation where = prefix_location(trainer, g, p);
      std::size_t held = 0;
      for (std::size_t n = 0; n < names.size(); ++n) {
        if (!under_prefix(names[n], prefix)) continue;
        ++held;
        const auto [other, other_prefix] = holder[n];
        if (other == groups.size()) {
          holder[n] = {g, p};
        } else if (other != g) {
          diagnostics.error(
              where,
              fmt::format("{} 'prefixes' \"{}\" holds the parameter {}, which {} \"{}\" holds "
                          "already: a parameter trains at one learning rate, so the groups' "
                          "prefixes must not overlap",
                          table_name(g), prefix, names[n], table_name(other),
                          groups[other].prefixes[other_prefix]));
          break;
        }
      }
      if (held > 0) continue;
      std::vector<std::string> notes;
      if (const std::string s = closest_match(prefix, paths); !s.empty())
        notes.push_back(fmt::format("did you mean \"{}\"?", s));
      notes.push_back("the model's modules with trainable parameters include: " +
                      first_few(second_level(paths), 12));
      diagnostics.error(
          where,
          fmt::format("{} 'prefixes' \"{}\" holds no trainable parameter of the model (expected "
                      "a module path such as \"backbone\" or \"condition_module\": a "
                      "parameter is held when its name is the path or starts with it and a dot)",
                      table_name(g), prefix),
          notes);
    }
  }
}

}  // namespace wscsl::host
