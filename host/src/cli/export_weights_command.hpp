// `wscsl export-weights`: a run's trained weights written as a plain dict of tensors that
// torch.load reads in Python.
#pragma once

#include <filesystem>

#include "command.hpp"

namespace wscsl::host {

class ExportWeightsCommand final : public Command {
 public:
  explicit ExportWeightsCommand(CLI::App& app);
  // Writes the checkpoint's parameters and buffers named <component>.<the plugin's own names>
  // (backbone.…, condition_module.…, loss_<i>.…).
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path target_;  // a run directory or a checkpoint inside one
  std::filesystem::path output_;
  bool list_ = false;  // also print every tensor's name and shape
};

}  // namespace wscsl::host
