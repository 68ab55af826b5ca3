// Which job a run belongs to, recorded in <run>/job.json by the process that writes the run, so
// that a launcher's restart continues its own job's run and no other (docs/reliability.md).
#pragma once

#include <filesystem>
#include <string>

#include "distributed/world.hpp"
#include "run_directory.hpp"

namespace wscsl::host {

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

// The job of this process, from the variables of its launcher.
JobIdentity job_identity(const World& world, const Environment& environment);

// What a restart prints as it continues `run`: "torchrun restarted the job (restart 1 of 1):
// continuing runs/p".
std::string continuing_text(const World& world, const JobIdentity& me, const RunDirectory& run);

// Records `me` and the pipeline it runs as the job of `run` (<run>/job.json).
void write_run_job(const RunDirectory& run, const JobIdentity& me,
                   const std::filesystem::path& pipeline);

// Refuses, in one sentence naming the run directory, both jobs and `resume_command`, a restart
// of another job than the one that made `run` (or a run that records none).
void require_own_run(const RunDirectory& run, const JobIdentity& me,
                     const std::string& resume_command);

}  // namespace wscsl::host
