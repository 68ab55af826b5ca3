#include "session.hpp"

#include <fmt/format.h>

#include "wscsl/runtime/plugin_manager.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

Session::Session(const GlobalOptions& options, const std::vector<fs::path>& pipeline_paths) {
  PluginSearch search;
  search.command_line = options.plugin_paths;
  search.pipeline = pipeline_paths;
  std::vector<std::string> warnings;
  const auto directories = search.directories(warnings);
  PluginManager(registry_).load(directories, warnings);
  for (const std::string& w : warnings)
    fmt::print(stderr, "wscsl: warning: {}\n", w);
}

namespace {

OpenPipeline opened_from(const GlobalOptions& global, const ConfigNode& root, const fs::path& file,
                         int processes) {
  OpenPipeline opened;
  opened.session = std::make_unique<Session>(global, pipeline_plugin_paths(root));
  opened.pipeline = build_pipeline(root, file, opened.session->registry(), processes);
  if (!opened.pipeline.warnings.empty())
    fmt::print(stderr, "{}\n", opened.pipeline.warnings.format());
  return opened;
}

}  // namespace

OpenPipeline open_pipeline(const GlobalOptions& global, const fs::path& file,
                           const std::vector<std::string>& overrides, int processes) {
  return opened_from(global, read_pipeline(file, overrides), file, processes);
}

OpenPipeline open_pipeline_on(const GlobalOptions& global, const fs::path& file,
                              const DeviceSetting& device, const std::string& command) {
  ConfigNode root = read_pipeline(file, {});
  set_trainer_device(root, device, command);
  return opened_from(global, root, file, 1);
}

}  // namespace wscsl::host
