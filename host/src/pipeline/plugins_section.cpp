#include "plugins_section.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

struct PluginsOptions {
  std::vector<std::string> paths;
  std::vector<std::string> require;
};

Schema<PluginsOptions> plugins_schema() {
  Schema<PluginsOptions> s("Where to find plugins and which must be present.");
  s.field("paths", &PluginsOptions::paths,
          "Extra plugin directories, relative to this file; searched after --plugin-path and "
          "WSCSL_PLUGIN_PATH.")
      .path();
  s.field("require", &PluginsOptions::require, "Plugins that must be loaded (by name).");
  return s;
}

}  // namespace

ConfigNode bind_plugins_section(const ConfigNode& table, const Registry& registry,
                                BindScope& scope) {
  const PluginsOptions options = plugins_schema().bind(table, scope);
  for (std::size_t i = 0; i < options.require.size(); ++i) {
    if (registry.find_plugin(options.require[i])) continue;
    std::vector<std::string> loaded;
    for (const auto& p : registry.plugins())
      loaded.push_back(p->name);
    const ConfigNode& item = table.find("require")->items()[i];
    scope.diagnostics->error(
        item.location(), fmt::format("required plugin '{}' is not loaded", options.require[i]),
        {"loaded plugins: " + (loaded.empty() ? "none" : join(loaded, ", ")),
         "add its directory with --plugin-path, WSCSL_PLUGIN_PATH or [plugins] paths"});
  }
  return plugins_schema().to_config(options);
}

}  // namespace wscsl::host
