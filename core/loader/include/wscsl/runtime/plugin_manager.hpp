// Finds, checks and loads plugin libraries. Libraries are never unloaded: objects, vtables and
// autograd nodes from a plugin may live until the process exits.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wscsl/plugin/abi.h"
#include "wscsl/runtime/registry.hpp"

namespace wscsl {

struct SearchDirectory {
  std::filesystem::path path;
  std::string origin;  // "--plugin-path", "WSCSL_PLUGIN_PATH", "pipeline [plugins] paths", ...
};

// Where plugins are looked for, highest priority first:
//   1. --plugin-path flags       2. WSCSL_PLUGIN_PATH (absolute entries only)
//   3. the pipeline's [plugins] paths (relative to the pipeline file)
//   4. the install directory (<libdir>/wscsl/plugins next to libwscsl_loader)
//   5. the build tree's plugin directory, when running from the build tree.
// The current directory is never searched implicitly; world-writable directories are refused.
struct PluginSearch {
  std::vector<std::filesystem::path> command_line;
  bool use_environment = true;
  std::vector<std::filesystem::path> pipeline;
  bool use_defaults = true;

  std::vector<SearchDirectory> directories(std::vector<std::string>& warnings) const;
};

struct HostVersions {
  unsigned abi = WSCSL_PLUGIN_ABI_VERSION;
  unsigned sdk_major = 0, sdk_minor = 0, sdk_patch = 0;
  std::string torch_version;
  std::string toolchain;
  static HostVersions current();
};

// Checks a plugin's handshake before any of its C++ runs. Returns "" when compatible, else the
// one-sentence reason. Compiler-version differences are only warnings.
std::string check_plugin_info(const wscsl_plugin_info* info, const std::filesystem::path& file,
                              const HostVersions& host, std::vector<std::string>& warnings);

class PluginManager {
 public:
  explicit PluginManager(Registry& registry);

  // Loads every libwscsl_*.so in the directories. A plugin that cannot be used is recorded in
  // Registry::refused() and reported as a warning; duplicates throw PluginError.
  void load(const std::vector<SearchDirectory>& directories, std::vector<std::string>& warnings);
  // Loads one library; throws PluginError with the reason when it is refused.
  void load_file(const std::filesystem::path& file, std::vector<std::string>& warnings);

 private:
  std::string try_load(const std::filesystem::path& file, std::vector<std::string>& warnings);
  Registry& registry_;
  std::vector<std::filesystem::path> seen_;
};

}  // namespace wscsl
