// `wscsl make-triplets`: triplets drawn from the per-image attributes of a pipeline's dataset and
// written in CSN's layout (triplet_files.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"
#include "triplet_files.hpp"

namespace wscsl::host {

class MakeTripletsCommand final : public Command {
 public:
  explicit MakeTripletsCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path pipeline_;  // its [dataset]; every component is built, so it is checked
  std::vector<std::string> overrides_;
  MakeTripletsOptions options_;
};

}  // namespace wscsl::host
