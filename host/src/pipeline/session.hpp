// The plugins of one command, and a pipeline opened with them.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline.hpp"
#include "wscsl/runtime/registry.hpp"

namespace wscsl::host {

struct GlobalOptions {
  std::vector<std::filesystem::path> plugin_paths;  // --plugin-path, searched first
};

// The registry with every plugin from the search path (and a pipeline's [plugins] paths).
class Session {
 public:
  explicit Session(const GlobalOptions& options,
                   const std::vector<std::filesystem::path>& pipeline_paths = {});
  const Registry& registry() const { return registry_; }

 private:
  Registry registry_;
};

// A pipeline file read with its overrides, its plugins loaded, every component built and every
// contract checked, for a data-parallel job of `processes` processes (they share each batch). The
// session outlives the pipeline: the components' code lives in its plugins.
struct OpenPipeline {
  std::unique_ptr<Session> session;
  Pipeline pipeline;
};
OpenPipeline open_pipeline(const GlobalOptions& global, const std::filesystem::path& file,
                           const std::vector<std::string>& overrides, int processes = 1);
// The same for one process computing on `device`, whatever the file's [trainer] device names;
// `command` is the command that asks, for messages.
OpenPipeline open_pipeline_on(const GlobalOptions& global, const std::filesystem::path& file,
                              const DeviceSetting& device, const std::string& command);

}  // namespace wscsl::host
