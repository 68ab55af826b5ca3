// `wscsl plugins`: the plugins found on the search path, what each provides, and those refused.
#pragma once

#include "command.hpp"

namespace wscsl::host {

class PluginsCommand final : public Command {
 public:
  explicit PluginsCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  bool json_ = false;
};

}  // namespace wscsl::host
