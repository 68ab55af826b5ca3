// The keys of a component table that the host reads itself: `type`, a loss's `weight`, a list
// entry's `name`. They have a schema like every option, bound before the component's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wscsl/config/schema.hpp"
#include "wscsl/plugin/component.hpp"
#include "wscsl/runtime/registry.hpp"

namespace wscsl::host {

struct HostKeys {
  std::string type;
  double weight = 1.0;
  std::optional<std::string> name;  // absent: the entry is named after its type (a text
                                    // encoder: after its field)
  std::string field;                // a text encoder's dataset text field
};

// Where a component table sits: the single [dataset]-style tables, or an entry of [[losses]],
// [[text_encoders]] or [[evaluators]].
enum class TablePlace { Single, ListEntry };

// Where a kind's tables sit: [dataset], [backbone] and [condition_module] are single tables.
TablePlace place_of(Kind kind);

Schema<HostKeys> host_key_schema(Kind kind, TablePlace place);

// The host keys' names of such a table, which the component's own bind skips.
std::vector<std::string> host_key_names(Kind kind, TablePlace place);

// Binds the host keys of `table` (its other keys are the component's).
HostKeys bind_host_keys(const ConfigNode& table, Kind kind, TablePlace place, BindScope& scope);

// "unknown loss type "marign"", with the nearest type, the available ones and refused plugins.
void report_unknown_type(Kind kind, const ConfigNode& type, const Registry& registry,
                         Diagnostics& diagnostics);

}  // namespace wscsl::host
