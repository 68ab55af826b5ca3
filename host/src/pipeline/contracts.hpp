// `wscsl check` for what components need from each other: every declared need is met by a
// component earlier in the pipeline, and trainer.select_metric is a metric an evaluator declares.
#pragma once

#include "builder.hpp"

namespace wscsl::host {

// Reports each unmet need at the table of the component that has it, with the component types
// that could meet it.
void check_contracts(const BuiltPipeline& built, const Registry& registry,
                     Diagnostics& diagnostics);

void check_select_metric(const Pipeline& pipeline, const ConfigNode& root,
                         Diagnostics& diagnostics);

}  // namespace wscsl::host
