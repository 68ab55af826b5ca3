#include "provenance.hpp"

#include <fmt/format.h>

#include "clock.hpp"
#include "distributed/launchers.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/plugin/toolchain.hpp"
#include "wscsl/version.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

std::string resolved_toml(const Pipeline& pipeline, const Placement& placement) {
  ConfigNode root = pipeline.resolved;
  ConfigNode provenance = ConfigNode::table();
  provenance.set("wscsl", ConfigNode::string(WSCSL_VERSION_STRING));
  provenance.set("libtorch", ConfigNode::string(WSCSL_TORCH_IDENTITY));
  provenance.set("toolchain", ConfigNode::string(WSCSL_TOOLCHAIN_FINGERPRINT));
  provenance.set("threads", ConfigNode::integer(placement.threads));
  provenance.set("processes", ConfigNode::integer(placement.processes));
  provenance.set("nodes", ConfigNode::integer(placement.nodes));
  provenance.set("launcher", ConfigNode::string(launcher_name(placement.launcher)));
  provenance.set("seed", ConfigNode::integer(pipeline.trainer.seed));
  provenance.set("device", ConfigNode::string(placement.device.str()));
  provenance.set("source", ConfigNode::string(fs::absolute(pipeline.source).string()));
  provenance.set("written", ConfigNode::string(now_text("%Y-%m-%dT%H:%M:%SZ", TimeZone::Utc)));
  ConfigNode plugins = ConfigNode::table();
  for (const PluginRecord* p : pipeline.plugins)
    plugins.set(p->name, ConfigNode::string(fmt::format("{} {}", p->version, p->file)));
  provenance.set("plugins", plugins);
  root.set("provenance", provenance);
  return "# Written by wscsl: the pipeline as it ran, every default filled in.\n" + to_toml(root);
}

}  // namespace wscsl::host
