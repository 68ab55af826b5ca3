#include "wscsl/runtime/plugin_manager.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <boost/dll/library_info.hpp>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

// Libraries stay loaded for the life of the process. The vector is leaked on purpose so that no
// static destructor ever unloads a plugin while its objects are still alive.
std::vector<boost::dll::shared_library>& resident_libraries() {
  static auto* libraries = new std::vector<boost::dll::shared_library>();
  return *libraries;
}

bool world_writable(const fs::path& p) {
  std::error_code ec;
  const auto perms = fs::status(p, ec).permissions();
  return !ec && (perms & fs::perms::others_write) != fs::perms::none;
}

bool is_plugin_file_name(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("libwscsl_", 0) == 0 && p.extension() == ".so";
}

class CollectingRegistrar final : public Registrar {
 public:
  std::vector<ComponentFactory> factories;

 protected:
  void add_factory(ComponentFactory factory) override { factories.push_back(std::move(factory)); }
};

fs::path install_plugin_dir() {
  std::error_code ec;
  const fs::path core_library = boost::dll::this_line_location(ec);
  if (ec) return {};
  return core_library.parent_path() / "wscsl" / "plugins";
}

}  // namespace

std::vector<SearchDirectory> PluginSearch::directories(std::vector<std::string>& warnings) const {
  std::vector<SearchDirectory> dirs;
  auto add = [&](fs::path p, const std::string& origin) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      warnings.push_back(
          fmt::format("plugin directory {} (from {}) does not exist", p.string(), origin));
      return;
    }
    p = fs::canonical(p, ec);
    if (world_writable(p)) {
      warnings.push_back(fmt::format("ignoring plugin directory {} (from {}): it is world-writable",
                                     p.string(), origin));
      return;
    }
    for (const SearchDirectory& d : dirs)
      if (d.path == p) return;
    dirs.push_back({p, origin});
  };
  for (const fs::path& p : command_line)
    add(fs::absolute(p), "--plugin-path");
  if (use_environment) {
    if (const char* env = std::getenv("WSCSL_PLUGIN_PATH")) {
      for (const std::string& entry : split(env, ':')) {
        if (entry.empty()) continue;  // an empty entry must not mean the current directory
        if (fs::path(entry).is_relative()) {
          warnings.push_back(fmt::format(
              "ignoring relative entry '{}' in WSCSL_PLUGIN_PATH; use an absolute path", entry));
          continue;
        }
        add(entry, "WSCSL_PLUGIN_PATH");
      }
    }
  }
  for (const fs::path& p : pipeline)
    add(p, "the pipeline's [plugins] paths");
  if (use_defaults) {
    std::error_code ec;
    const fs::path installed = install_plugin_dir();
    if (!installed.empty() && fs::is_directory(installed, ec))
      add(installed, "the install directory");
#ifdef WSCSL_BUILD_LIB_DIR
    const fs::path here = boost::dll::this_line_location(ec).parent_path();
    if (!ec && fs::equivalent(here, WSCSL_BUILD_LIB_DIR, ec) &&
        fs::is_directory(WSCSL_BUILD_PLUGIN_DIR, ec))
      add(WSCSL_BUILD_PLUGIN_DIR, "the build tree");
#endif
  }
  return dirs;
}

namespace {

// A schema that takes a fact the host never establishes would silently bind nothing.
std::string check_schema_facts(const std::vector<ComponentFactory>& factories,
                               const std::string& plugin, const fs::path& file) {
  for (const ComponentFactory& f : factories) {
    for (const FieldDescription& field : f.schema.fields) {
      for (const std::string& fact : {field.derived_from, field.default_from}) {
        if (fact.empty() || is_known_fact(fact)) continue;
        const std::string nearest = nearest_fact(fact);
        return fmt::format(
            "plugin '{}' ({}): {} '{}' option '{}' takes the fact '{}', which the host does not "
            "establish{}",
            plugin, file.string(), kind_name(f.kind), f.type, field.name, fact,
            nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest));
      }
    }
  }
  return {};
}

}  // namespace

PluginManager::PluginManager(Registry& registry) : registry_(registry) {}

void PluginManager::load(const std::vector<SearchDirectory>& directories,
                         std::vector<std::string>& warnings) {
  for (const SearchDirectory& dir : directories) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir.path, ec))
      if (is_plugin_file_name(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const std::string reason = try_load(file, warnings);
      if (!reason.empty()) {
        registry_.add_refused({file.string(), reason});
        warnings.push_back("refused: " + reason);
      }
    }
  }
}

void PluginManager::load_file(const fs::path& file, std::vector<std::string>& warnings) {
  const std::string reason = try_load(file, warnings);
  if (!reason.empty()) throw PluginError(reason);
}

std::string PluginManager::try_load(const fs::path& file, std::vector<std::string>& warnings) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  if (ec) return fmt::format("{}: {}", file.string(), ec.message());
  if (std::find(seen_.begin(), seen_.end(), canonical) != seen_.end()) return {};
  seen_.push_back(canonical);
  if (world_writable(canonical))
    return fmt::format("{} is world-writable; refusing to load it", canonical.string());

  // Look for the handshake symbol without running any of the library's code.
  try {
    boost::dll::library_info elf(canonical);
    const std::vector<std::string> symbols = elf.symbols();
    if (std::find(symbols.begin(), symbols.end(), WSCSL_PLUGIN_INFO_SYMBOL) == symbols.end())
      return fmt::format("{} is not a wscsl plugin (it does not export {})", canonical.string(),
                         WSCSL_PLUGIN_INFO_SYMBOL);
  } catch (const std::exception& e) {
    return fmt::format("{} is not a readable shared library ({})", canonical.string(), e.what());
  }

  boost::dll::shared_library library;
  try {
    library.load(canonical, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return fmt::format("{} could not be loaded: {}", canonical.string(), e.what());
  }
  const auto info_fn = library.get<const wscsl_plugin_info*()>(WSCSL_PLUGIN_INFO_SYMBOL);
  const wscsl_plugin_info* info = info_fn();
  const std::string problem = check_plugin_info(info, canonical, HostVersions::current(), warnings);
  if (!problem.empty()) {
    resident_libraries().push_back(std::move(library));
    return problem;
  }

  const std::string symbol =
      WSCSL_PLUGIN_REGISTER_PREFIX + std::to_string(WSCSL_PLUGIN_ABI_VERSION);
  if (!library.has(symbol)) {
    resident_libraries().push_back(std::move(library));
    return fmt::format(
        "plugin '{}' ({}) has no {} entry point; was it built for another plugin ABI?", info->name,
        canonical.string(), symbol);
  }
  CollectingRegistrar registrar;
  char error[1024] = {0};
  const int status =
      library.get<int(void*, char*, size_t)>(symbol)(&registrar, error, sizeof error);
  resident_libraries().push_back(std::move(library));
  if (status != 0)
    return fmt::format("plugin '{}' ({}) failed to register its components: {}", info->name,
                       canonical.string(), error);

  const std::string unknown_fact = check_schema_facts(registrar.factories, info->name, canonical);
  if (!unknown_fact.empty()) return unknown_fact;

  PluginRecord record;
  record.name = info->name;
  record.version = info->version ? info->version : "";
  record.description = info->description ? info->description : "";
  record.file = canonical.string();
  record.torch_version = info->torch_version;
  record.toolchain = info->toolchain;
  registry_.add_plugin(std::move(record), std::move(registrar.factories));
  return {};
}

}  // namespace wscsl
