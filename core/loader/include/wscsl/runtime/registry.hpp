// Every component type the loaded plugins provide, keyed by (kind, type).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "wscsl/plugin/registrar.hpp"

namespace wscsl {

struct PluginRecord {
  std::string name;
  std::string version;
  std::string description;
  std::string file;
  std::string torch_version;
  std::string toolchain;
  std::vector<std::string> types;  // "loss/margin", ...
};

struct RefusedPlugin {
  std::string file;
  std::string reason;  // one sentence naming the plugin, the file and what did not match
};

struct RegisteredComponent {
  ComponentFactory factory;
  const PluginRecord* plugin = nullptr;  // null for types registered by the host itself

  // "kind 'type' (plugin name version)", for messages.
  std::string describe() const;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  const RegisteredComponent* find(Kind kind, const std::string& type) const;
  std::vector<const RegisteredComponent*> of_kind(Kind kind) const;
  std::vector<std::string> type_names(Kind kind) const;
  const std::vector<std::unique_ptr<PluginRecord>>& plugins() const { return plugins_; }
  const std::vector<RefusedPlugin>& refused() const { return refused_; }
  const PluginRecord* find_plugin(const std::string& name) const;

  // Adds a plugin and all its factories at once, or nothing: a duplicate plugin name or component
  // type throws PluginError naming both files.
  void add_plugin(PluginRecord plugin, std::vector<ComponentFactory> factories);
  void add_refused(RefusedPlugin refused);

  // Constructs a component from options bound by its factory and labels it for messages.
  std::shared_ptr<Component> create(const RegisteredComponent& entry, const void* options,
                                    const Facts& facts, const std::string& label) const;

 private:
  std::vector<std::unique_ptr<PluginRecord>> plugins_;
  std::vector<std::unique_ptr<RegisteredComponent>> components_;
  std::vector<RefusedPlugin> refused_;
};

}  // namespace wscsl
