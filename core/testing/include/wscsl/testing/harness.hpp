// Test helpers for plugin authors: build a component through the real plugin loader from a TOML
// snippet, exactly as a pipeline would.
//
//   auto loss = wscsl::testing::build<wscsl::Loss>("margin", "margin = 0.5");
//
// Plugins are loaded from WSCSL_PLUGIN_PATH, which wscsl_add_plugin(... TESTS ...) sets for the
// plugin's own test.
#pragma once

#include <memory>
#include <string>

#include "wscsl/config/diagnostics.hpp"
#include "wscsl/config/schema.hpp"
#include "wscsl/runtime/registry.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::testing {

// The registry filled from WSCSL_PLUGIN_PATH, loaded once per process. Throws PluginError if a
// plugin there is refused.
Registry& registry();

// Binds `toml_body` (the keys of the component's table, without `type`) with the given facts and
// constructs the component. Throws ConfigError with every diagnostic when the options are invalid.
std::shared_ptr<Component> build_component(Kind kind, const std::string& type,
                                           const std::string& toml_body, const Facts& facts = {});

// The diagnostics binding `toml_body` produces (empty when valid), without constructing anything.
Diagnostics bind_diagnostics(Kind kind, const std::string& type, const std::string& toml_body,
                             const Facts& facts = {});

template <class Interface>
std::shared_ptr<Interface> build(const std::string& type, const std::string& toml_body = "",
                                 const Facts& facts = {}) {
  return std::static_pointer_cast<Interface>(
      build_component(Interface::kind_v, type, toml_body, facts));
}

// Facts as a pipeline would establish them, for components that need them.
Facts facts(std::int64_t num_conditions, std::int64_t embedding_dim);

// Adds the dataset's image facts (dataset.channels, dataset.height, dataset.width) to `facts`.
Facts with_images(Facts facts, std::int64_t channels, std::int64_t height, std::int64_t width);

// Adds the channels of the backbone's feature map (backbone.feature_map_channels) to `facts`.
Facts with_feature_map(Facts facts, std::int64_t channels);

}  // namespace wscsl::testing
