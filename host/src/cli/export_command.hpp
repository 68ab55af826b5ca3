// `wscsl export`: a pipeline's dataset written in CSN's layout — its images, labels and triplets
// (triplet_files.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"

namespace wscsl::host {

class ExportCommand final : public Command {
 public:
  explicit ExportCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path pipeline_;  // its [dataset]; every component is built, so it is checked
  std::vector<std::string> overrides_;
  std::filesystem::path out_;
};

}  // namespace wscsl::host
