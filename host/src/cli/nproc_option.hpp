// `--nproc N` of the data-parallel commands (train, eval, embed): this process starts the job's N
// processes on this machine (launcher.hpp) instead of being one of them.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"

namespace wscsl::host {

class NprocOption {
 public:
  // Adds --nproc to `command`.
  void add_to(CLI::App& command);

  int processes() const { return processes_; }
  // Whether this process starts the job's processes (N above 1). Throws UsageError where another
  // launcher started this process already as one rank of several.
  bool starts_processes(const World& world) const;
  // Runs the job's processes, each with the invocation's command line without --nproc, followed
  // by `extra`; returns the job's exit status.
  int launch(const Invocation& invocation, const std::vector<std::string>& extra = {}) const;

 private:
  int processes_ = 1;
};

}  // namespace wscsl::host
