// `wscsl check` for what components need from each other: every declared need is met by a
// component earlier in the pipeline, and trainer.select_metric is a metric an evaluator declares.
#pragma once

#include "builder.hpp"

namespace wscsl::host {

// Reports each unmet need at the table of the component that has it, with the component types
// that could meet it.
void check_contracts(const BuiltPipeline& built, const Registry& registry,
                     Diagnostics& diagnostics);

// The facts the options of a component (`site`, not built yet) take that no earlier component
// (`earlier`) established. Where an unmet need is behind them — a module that needs the feature
// map with a backbone that provides none — that need is reported; otherwise the facts. Nothing when
// the pipeline has errors already (they leave facts unestablished).
void report_missing_facts(const ComponentSite& site, const Contract& contract,
                          const std::vector<std::string>& missing,
                          const std::vector<ComponentSite>& earlier, const Registry& registry,
                          Diagnostics& diagnostics);

void check_select_metric(const Pipeline& pipeline, const ConfigNode& root,
                         Diagnostics& diagnostics);

}  // namespace wscsl::host
