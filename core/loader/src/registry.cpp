#include "wscsl/runtime/registry.hpp"

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl {

std::string RegisteredComponent::describe() const {
  std::string s = fmt::format("{} '{}'", kind_name(factory.kind), factory.type);
  if (plugin) s += fmt::format(" (plugin {} {})", plugin->name, plugin->version);
  return s;
}

Registry::Registry() = default;
Registry::~Registry() = default;

const RegisteredComponent* Registry::find(Kind kind, const std::string& type) const {
  for (const auto& c : components_)
    if (c->factory.kind == kind && c->factory.type == type) return c.get();
  return nullptr;
}

std::vector<const RegisteredComponent*> Registry::of_kind(Kind kind) const {
  std::vector<const RegisteredComponent*> out;
  for (const auto& c : components_)
    if (c->factory.kind == kind) out.push_back(c.get());
  return out;
}

std::vector<std::string> Registry::type_names(Kind kind) const {
  std::vector<std::string> names;
  for (const RegisteredComponent* c : of_kind(kind))
    names.push_back(c->factory.type);
  return names;
}

const PluginRecord* Registry::find_plugin(const std::string& name) const {
  for (const auto& p : plugins_)
    if (p->name == name) return p.get();
  return nullptr;
}

void Registry::add_plugin(PluginRecord plugin, std::vector<ComponentFactory> factories) {
  if (const PluginRecord* existing = find_plugin(plugin.name))
    throw PluginError(
        fmt::format("two plugins are named '{}': {} and {}; remove one of them from "
                    "the plugin search path",
                    plugin.name, existing->file, plugin.file));
  for (std::size_t i = 0; i < factories.size(); ++i) {
    const ComponentFactory& f = factories[i];
    std::string where = plugin.file;
    if (const RegisteredComponent* existing = find(f.kind, f.type))
      where = existing->plugin ? existing->plugin->file : std::string("the host");
    for (std::size_t j = 0; j < i && where == plugin.file; ++j)
      if (factories[j].kind == f.kind && factories[j].type == f.type) where = "itself";
    if (where != plugin.file)
      throw PluginError(fmt::format("{} type '{}' is provided twice: by {} and by {}",
                                    kind_name(f.kind), f.type, where, plugin.file));
  }
  auto record = std::make_unique<PluginRecord>(std::move(plugin));
  for (ComponentFactory& f : factories) {
    record->types.push_back(fmt::format("{}/{}", kind_name(f.kind), f.type));
    auto entry = std::make_unique<RegisteredComponent>();
    entry->factory = std::move(f);
    entry->plugin = record.get();
    components_.push_back(std::move(entry));
  }
  plugins_.push_back(std::move(record));
}

void Registry::add_refused(RefusedPlugin refused) {
  refused_.push_back(std::move(refused));
}

std::shared_ptr<Component> Registry::create(const RegisteredComponent& entry, const void* options,
                                            const Facts& facts, const std::string& label) const {
  const BuildContext context{facts};
  std::shared_ptr<Component> component;
  try {
    component = entry.factory.create(options, context);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {  // LibTorch's own messages carry a backtrace
    throw ComponentError(
        fmt::format("{} could not be built: {}", label, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw ComponentError(fmt::format("{} could not be built: {}", label, e.what()));
  }
  if (!component || component->kind() != entry.factory.kind)
    throw ComponentError(
        fmt::format("{} did not build a {}", label, kind_name(entry.factory.kind)));
  component->set_label(label);
  component->set_contract(entry.factory.contract(options));
  return component;
}

}  // namespace wscsl
