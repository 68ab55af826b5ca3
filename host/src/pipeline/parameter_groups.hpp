// [[trainer.parameter_groups]]: parameters that train at a learning rate of their own (the
// released ASEN++ second stage trains its global branch ten times slower than its local one).
#pragma once

#include <string>
#include <vector>

#include "wscsl/config/binder.hpp"
#include "wscsl/config/schema.hpp"

namespace wscsl::host {

struct ParameterGroup {
  // Dotted paths in the model ("backbone", "condition_module.local_branch", "loss_0"): a parameter
  // belongs to the group when its name is one of them or starts with one and a dot.
  std::vector<std::string> prefixes;
  double lr = 0.0;  // the group's initial learning rate, scheduled as trainer.lr is

  static Schema<ParameterGroup> schema();
};

// Whether the parameter `name` is `prefix` or lies under it (whole dotted components).
bool under_prefix(const std::string& name, const std::string& prefix);

// Binds trainer.parameter_groups of the [trainer] table `trainer` (none when it has no such key);
// problems go to scope.diagnostics.
std::vector<ParameterGroup> bind_parameter_groups(const ConfigNode& trainer, BindScope& scope);
// The groups as [[trainer.parameter_groups]] tables, for the resolved pipeline.
ConfigNode parameter_groups_config(const std::vector<ParameterGroup>& groups);

// For each of `names` (the model's trainable parameters), the index of the group it belongs to,
// or groups.size() when none holds it. Meaningful only for groups that passed
// check_parameter_groups.
std::vector<std::size_t> group_of_each(const std::vector<ParameterGroup>& groups,
                                       const std::vector<std::string>& names);

// Reports, at the group's table in `trainer` (the pipeline's [trainer] table, or null), a prefix
// under which no trainable parameter of `names` lies and a parameter two prefixes hold.
void check_parameter_groups(const std::vector<ParameterGroup>& groups,
                            const std::vector<std::string>& names, const ConfigNode* trainer,
                            Diagnostics& diagnostics);

}  // namespace wscsl::host
