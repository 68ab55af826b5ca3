#include "command.hpp"

#include <c10/util/Exception.h>

#include <cstdlib>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/version.hpp"

namespace wscsl::host {
namespace {

int fail(const std::string& message, int status) {
  fmt::print(stderr, "{}\n", message);
  return status;
}

}  // namespace

CommandLine::CommandLine(const std::string& description) : app_(description) {
  app_.require_subcommand(1);
  app_.add_option("--plugin-path", global_.plugin_paths,
                  "Plugin directory searched before WSCSL_PLUGIN_PATH (repeatable)");
  app_.set_version_flag("--version", WSCSL_VERSION_STRING);
}

int CommandLine::run(int argc, char** argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_.exit(e) == 0 ? 0 : 2;
  }
  try {
    for (const auto& command : commands_) {
      if (!command->parsed()) continue;
      const World world = command->data_parallel() ? world_from_environment(std::getenv) : World{};
      return command->run({global_, world, std::vector<std::string>(argv + 1, argv + argc)});
    }
  } catch (const UsageError& e) {
    return fail(fmt::format("wscsl: error: {}", e.what()), 2);
  } catch (const ConfigError& e) {
    const auto& d = e.diagnostics();
    return fail(fmt::format("{}\nwscsl: {} error{} in the configuration; nothing was run",
                            d.format(), d.error_count(), d.error_count() == 1 ? "" : "s"),
                2);
  } catch (const PluginError& e) {
    return fail(fmt::format("wscsl: plugin error: {}", e.what()), 3);
  } catch (const Error& e) {
    return fail(fmt::format("wscsl: error: {}", e.what()), 1);
  } catch (const c10::Error& e) {
    return fail(fmt::format("wscsl: error: {}", e.what_without_backtrace()), 1);
  } catch (const std::exception& e) {
    return fail(fmt::format("wscsl: error: {}", e.what()), 1);
  }
  return 0;
}

}  // namespace wscsl::host
