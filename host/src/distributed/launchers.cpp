#include "launchers.hpp"

#include <torch/version.h>
#include <unistd.h>

#include <charconv>
#include <climits>

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {0};
  if (::gethostname(name, sizeof name - 1) != 0) return "this machine";
  return name;
}

// torchrun's --rdzv_id when none is given.
constexpr const char* kTorchrunDefaultRunId = "none";

int restart_count(const Environment& environment, const char* name) {
  const char* value = environment(name);
  if (!value) return 0;
  const std::string text = value;
  int count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc() || end != text.data() + text.size() || count < 0)
    throw Error(fmt::format("{}='{}' is not a whole number", name, text));
  return count;
}

}  // namespace

const char* launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::None:
      return "one process";
    case Launcher::Nproc:
      return "--nproc";
    case Launcher::Torchrun:
      return "torchrun";
    case Launcher::Slurm:
      return "srun";
    case Launcher::Environment:
      return "the environment";
  }
  return "";
}

std::string job_of(const World& world) {
  switch (world.launcher) {
    case Launcher::Torchrun:
      return "the torchrun job";
    case Launcher::Slurm:
      return "the srun step";
    case Launcher::Nproc:
      return "the --nproc job";
    case Launcher::Environment:
    case Launcher::None:
      break;
  }
  return fmt::format("WORLD_SIZE={}", world.size);
}

std::string rendezvous_way_out(const World& world, const std::string& torchrun) {
  switch (world.launcher) {
    case Launcher::Torchrun:
      return fmt::format(
          "a torchrun of another PyTorch serves a store that LibTorch {} cannot speak to: start "
          "the job with {} (the torchrun of the PyTorch wscsl is built with), or on one machine "
          "with `wscsl train … --nproc {}`; if it is that torchrun, is its agent still running?",
          TORCH_VERSION,
          torchrun.empty() ? fmt::format("the torchrun of PyTorch {}", TORCH_VERSION)
                           : fmt::format("`{}`", torchrun),
          world.size);
    case Launcher::Slurm:
      return fmt::format(
          "did every task of the step start (srun -n {}), and is MASTER_PORT free "
          "on the first node?",
          world.size);
    case Launcher::Nproc:
      return "did a process of the job stop before it joined (see its output above)?";
    case Launcher::Environment:
    case Launcher::None:
      break;
  }
  return fmt::format(
      "start every rank with the same MASTER_ADDR and MASTER_PORT and WORLD_SIZE={}, "
      "rank 0 among them",
      world.size);
}

std::string resume_command(const World& world, const std::string& run) {
  switch (world.launcher) {
    case Launcher::Nproc:
      return fmt::format("wscsl train --resume {} --nproc {}", run, world.size);
    case Launcher::Torchrun:
      return fmt::format("torchrun … --no_python wscsl train --resume {}", run);
    case Launcher::Slurm:
      return fmt::format("srun wscsl train --resume {}", run);
    case Launcher::Environment:
      return fmt::format("wscsl train --resume {} in every process of the job", run);
    case Launcher::None:
      break;
  }
  return fmt::format("wscsl train --resume {}", run);
}

std::string how_to_continue(const World& world, const std::string& run) {
  if (world.launcher == Launcher::Torchrun && world.restart < world.max_restarts)
    return fmt::format(
        "torchrun restarts the job ({} of --max_restarts {} used), which continues "
        "from them",
        world.restart, world.max_restarts);
  if (world.launcher == Launcher::Torchrun)
    return fmt::format("torchrun has no restart left (--max_restarts {}); continue with `{}`",
                       world.max_restarts, resume_command(world, run));
  return fmt::format("continue with `{}`", resume_command(world, run));
}

JobIdentity job_identity(const World& world, const Environment& environment) {
  JobIdentity me;
  me.launcher = world.launcher;
  const std::string process_on_host = fmt::format("{} on {}", ::getppid(), host_name());
  switch (world.launcher) {
    case Launcher::Torchrun: {
      const char* run_id = environment("TORCHELASTIC_RUN_ID");
      const std::string id = run_id ? run_id : kTorchrunDefaultRunId;
      // The workers' parent is torchrun's agent, the same process for every restart it makes.
      me.job = id == kTorchrunDefaultRunId
                   ? fmt::format("torchrun run '{}' of the agent process {}", id, process_on_host)
                   : fmt::format("torchrun run '{}'", id);
      me.restart = world.restart;
      break;
    }
    case Launcher::Slurm: {
      const char* job_id = environment("SLURM_JOB_ID");
      me.job = fmt::format("Slurm job {}", job_id ? job_id : "(SLURM_JOB_ID unset)");
      me.restart = restart_count(environment, "SLURM_RESTART_COUNT");
      break;
    }
    case Launcher::Nproc:
      me.job = fmt::format("--nproc {} of the process {}", world.size, process_on_host);
      break;
    case Launcher::Environment:
      me.job =
          fmt::format("the job of RANK and WORLD_SIZE started by the process {}", process_on_host);
      break;
    case Launcher::None:
      me.job = fmt::format("the process {} on {}", ::getpid(), host_name());
      break;
  }
  return me;
}

std::string continuing_text(const World& world, const JobIdentity& me, const std::string& run) {
  if (world.launcher == Launcher::Slurm)
    return fmt::format("Slurm requeued the job (restart {}): continuing {}", me.restart, run);
  return fmt::format("torchrun restarted the job (restart {} of {}): continuing {}", world.restart,
                     world.max_restarts, run);
}

}  // namespace wscsl::host
