// Each launcher's facts in one place — wscsl's --nproc, torchrun, Slurm's srun, and RANK and
// WORLD_SIZE set by hand: its name, how messages name its job, what to check when the job's
// processes do not meet, what continues a stopped run under it and what it does after a failure,
// and what tells one of its jobs from another. world.cpp reads each one's variables into a World.
#pragma once

#include <string>

#include "world.hpp"

namespace wscsl::host {

// The launcher's name in messages and in [provenance]: "torchrun", "srun", "--nproc", ….
const char* launcher_name(Launcher launcher);

// The job of `world` as messages name it: "the torchrun job", "the srun step", "WORLD_SIZE=2".
std::string job_of(const World& world);

// What to check when the processes of `world` do not all reach the rendezvous store. `torchrun`
// is how to run the torchrun of the PyTorch wscsl is built with ("" where the build does not know).
std::string rendezvous_way_out(const World& world, const std::string& torchrun);

// The command that continues the run in `run` from its last checkpoint, as the launcher that
// started `world` runs it ("torchrun … --no_python wscsl train --resume runs/p").
std::string resume_command(const World& world, const std::string& run);

// What to do after a failure that left the checkpoints of `run` intact: torchrun restarts the job
// while it has restarts left; otherwise resume_command.
std::string how_to_continue(const World& world, const std::string& run);

// The job of a process, as <run>/job.json records it (run/run_job.hpp), so that a launcher's
// restart continues its own job's run and no other.
struct JobIdentity {
  Launcher launcher = Launcher::None;
  // What tells this job from another of its launcher, as messages name it: "torchrun run 'x'"
  // (TORCHELASTIC_RUN_ID; for torchrun's default id, "none", which names no job, also the agent
  // process that started the worker), "Slurm job 1234" (SLURM_JOB_ID), or for --nproc, one
  // process and a job described by hand, the process that started it.
  std::string job;
  // Whether the launcher started this job's processes again: torchrun's restart
  // (TORCHELASTIC_RESTART_COUNT > 0) or a requeued Slurm job (SLURM_RESTART_COUNT > 0).
  int restart = 0;
};

// The job of this process of `world`, from the variables of its launcher.
JobIdentity job_identity(const World& world, const Environment& environment);

// What a restart of `me` prints as it continues `run`: "torchrun restarted the job (restart 1 of
// 1): continuing runs/p", or Slurm's requeue.
std::string continuing_text(const World& world, const JobIdentity& me, const std::string& run);

}  // namespace wscsl::host
