// `wscsl train`: trains a pipeline, alone or as one process of a data-parallel job, then evaluates
// it on the test split.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"
#include "nproc_option.hpp"

namespace wscsl::host {

class TrainCommand final : public Command {
 public:
  explicit TrainCommand(CLI::App& app);
  bool data_parallel() const override { return true; }
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path pipeline_;  // empty when resuming
  std::string resume_;              // --resume: the run to continue
  std::filesystem::path run_dir_;
  std::vector<std::string> overrides_;
  std::int64_t stop_after_steps_ = 0;
  NprocOption nproc_;
};

}  // namespace wscsl::host
