#include "nproc_option.hpp"

#include <fmt/format.h>

#include "distributed/launchers.hpp"
#include "launcher.hpp"

namespace wscsl::host {

void NprocOption::add_to(CLI::App& command) {
  command
      .add_option("--nproc", processes_,
                  "Run as N data-parallel processes on this machine (rank 0 reports)")
      ->check(CLI::Range(1, 1024));
}

bool NprocOption::starts_processes(const World& world) const {
  if (processes_ > 1 && world.size > 1)
    throw UsageError(
        fmt::format("--nproc starts its own processes, but this one is already rank "
                    "{} of {} started by {}",
                    world.rank, world.size, launcher_name(world.launcher)));
  return processes_ > 1;
}

int NprocOption::launch(const Invocation& invocation, const std::vector<std::string>& extra) const {
  std::vector<std::string> rank_arguments;
  const std::vector<std::string>& given = invocation.arguments;
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (given[i] == "--nproc") {
      ++i;
      continue;
    }
    if (given[i].rfind("--nproc=", 0) == 0) continue;
    rank_arguments.push_back(given[i]);
  }
  rank_arguments.insert(rank_arguments.end(), extra.begin(), extra.end());
  return launch_local(processes_, rank_arguments);
}

}  // namespace wscsl::host
