// Binds every table of a pipeline strictly and constructs its components in pipeline order,
// establishing the facts later components derive their options from.
#pragma once

#include <filesystem>
#include <vector>

#include "pipeline.hpp"

namespace wscsl::host {

// Where one built component came from: for messages that point at its table.
struct ComponentSite {
  Kind kind;
  std::string where;        // "[losses.1]"
  SourceLocation location;  // of its table
  const Component* component;
  std::string described;  // "evaluator 'retrieval' (plugin retrieval 0.1.0)"
};

struct BuiltPipeline {
  Pipeline pipeline;
  std::vector<ComponentSite> sites;  // in pipeline order
};

// Collects every problem in `diagnostics`; the pipeline's components are null where a table was
// wrong.
BuiltPipeline build_components(const ConfigNode& root, const std::filesystem::path& source,
                               const Registry& registry, Diagnostics& diagnostics);

}  // namespace wscsl::host
