// The pipeline's [plugins] table: extra plugin directories and the plugins that must be loaded.
#pragma once

#include "wscsl/config/node.hpp"
#include "wscsl/config/schema.hpp"
#include "wscsl/runtime/registry.hpp"

namespace wscsl::host {

// Binds `table` (an empty table when the pipeline has none) and reports in `scope` every required
// plugin that `registry` has not loaded. Returns the table as resolved.
ConfigNode bind_plugins_section(const ConfigNode& table, const Registry& registry,
                                BindScope& scope);

}  // namespace wscsl::host
