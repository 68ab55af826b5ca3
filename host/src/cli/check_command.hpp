// `wscsl check`: a pipeline built and checked whole, its components probed on a few triplets
// (pipeline/probe.hpp) and every split read, reporting every problem.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"

namespace wscsl::host {

class CheckCommand final : public Command {
 public:
  explicit CheckCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path pipeline_;
  std::vector<std::string> overrides_;
  std::vector<std::string> skip_probe_;  // kinds the probe does not run
};

}  // namespace wscsl::host
