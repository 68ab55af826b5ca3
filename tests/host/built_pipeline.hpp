// Pipelines of TOML text built from the in-tree plugins, for the host tests that link the host
// library (pipelines.hpp holds the texts and is shared with tests that do not).
#pragma once

#include <string>

#include "distributed/strategy.hpp"
#include "pipeline/pipeline.hpp"
#include "pipelines.hpp"
#include "wscsl/config/toml.hpp"

namespace wscsl::test {

// The pipeline of `text`, as if read from a file named `name` (which its errors name).
inline host::Pipeline built_pipeline(const std::string& text, const std::string& name = "p.toml") {
  return host::build_pipeline(parse_toml(text, name), name, in_tree_plugins());
}

// tiny_pipeline(), built.
inline host::Pipeline built_tiny_pipeline() {
  return built_pipeline(tiny_pipeline());
}

// One process of its own on the CPU, where a built pipeline's model is, with the threads of
// `pipeline`'s [trainer]: what embed_split and evaluate_run are given outside a job.
inline host::Strategy alone(const host::Pipeline& pipeline) {
  host::TrainerOptions on_the_cpu = pipeline.trainer;
  on_the_cpu.device = {host::DeviceKind::Cpu, -1};
  return host::Strategy(on_the_cpu, host::World{});
}

}  // namespace wscsl::test
