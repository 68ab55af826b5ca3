// The resolved.toml of a run: the pipeline as it ran, with where and with what it ran.
#pragma once

#include <string>

#include "distributed/placement.hpp"
#include "pipeline/pipeline.hpp"

namespace wscsl::host {

// The resolved pipeline plus a [provenance] table (versions, plugins, where it ran: the
// placement's device, threads and processes), as TOML.
std::string resolved_toml(const Pipeline& pipeline, const Placement& placement);

}  // namespace wscsl::host
