// The resolved.toml of a run: the pipeline as it ran, with where and with what it ran.
#pragma once

#include <string>

#include "pipeline/pipeline.hpp"

namespace wscsl::host {

// The resolved pipeline plus a [provenance] table (versions, plugins, threads), as TOML.
std::string resolved_toml(const Pipeline& pipeline);

}  // namespace wscsl::host
