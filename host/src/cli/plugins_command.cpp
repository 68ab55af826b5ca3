#include "plugins_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/util/text.hpp"

namespace wscsl::host {

PluginsCommand::PluginsCommand(CLI::App& app)
    : Command(app, "plugins", "List the plugins found and what they provide") {
  subcommand().add_flag("--json", json_, "JSON output");
}

int PluginsCommand::run(const Invocation& invocation) {
  using Json = nlohmann::ordered_json;
  Session session(invocation.global);
  const Registry& r = session.registry();
  if (json_) {
    Json plugins = Json::array(), refused = Json::array();
    for (const auto& p : r.plugins())
      plugins.push_back({{"name", p->name},
                         {"version", p->version},
                         {"file", p->file},
                         {"description", p->description},
                         {"types", p->types}});
    for (const RefusedPlugin& refusal : r.refused())
      refused.push_back({{"file", refusal.file}, {"reason", refusal.reason}});
    fmt::print("{}\n", Json{{"plugins", plugins}, {"refused", refused}}.dump(2));
    return 0;
  }
  if (r.plugins().empty()) fmt::print("no plugins found\n");
  for (const auto& p : r.plugins()) {
    fmt::print("{} {}  {}\n    {}\n    provides: {}\n", p->name, p->version, p->file,
               p->description, join(p->types, ", "));
  }
  for (const RefusedPlugin& refused : r.refused())
    fmt::print("refused: {}\n", refused.reason);
  return 0;
}

}  // namespace wscsl::host
