// `wscsl check` for what components need from each other: every declared need is met by a
// component earlier in the pipeline, and trainer.select_metric is a metric an evaluator declares.
#pragma once

#include "builder.hpp"

namespace wscsl::host {

// Reports each unmet need at the table of the component that has it, with the component types
// that could meet it.
void check_contracts(const BuiltPipeline& built, const Registry& registry,
                     Diagnostics& diagnostics);

// A component (`where`, `described`, at `location`) that needs the backbone's feature map, in a
// pipeline whose backbone provides none: one sentence naming both, and the backbones that do.
void refuse_missing_feature_map(const std::string& where, const std::string& described,
                                const SourceLocation& location, const ComponentSite& backbone,
                                const Registry& registry, Diagnostics& diagnostics);

void check_select_metric(const Pipeline& pipeline, const ConfigNode& root,
                         Diagnostics& diagnostics);

}  // namespace wscsl::host
