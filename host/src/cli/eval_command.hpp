// `wscsl eval`: evaluates a trained run (its best checkpoint) or one checkpoint on the test split,
// alone or as one process of a data-parallel job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"
#include "nproc_option.hpp"

namespace wscsl::host {

class EvalCommand final : public Command {
 public:
  explicit EvalCommand(CLI::App& app);
  bool data_parallel() const override { return true; }
  // With several processes, each embeds a share of the images and rank 0 evaluates.
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path target_;  // a run directory or a checkpoint inside one
  std::vector<std::string> overrides_;
  NprocOption nproc_;
};

}  // namespace wscsl::host
