// Which job a run belongs to (JobIdentity, launchers.hpp), recorded in <run>/job.json by the
// process that writes the run, so that a launcher's restart continues its own job's run and no
// other (docs/reliability.md).
#pragma once

#include <filesystem>
#include <string>

#include "distributed/launchers.hpp"
#include "run_directory.hpp"

namespace wscsl::host {

// Records `me` and the pipeline it runs as the job of `run` (<run>/job.json).
void write_run_job(const RunDirectory& run, const JobIdentity& me,
                   const std::filesystem::path& pipeline);

// Refuses, in one sentence naming the run directory, both jobs and `resume_command`, a restart
// of another job than the one that made `run` (or a run that records none).
void require_own_run(const RunDirectory& run, const JobIdentity& me,
                     const std::string& resume_command);

}  // namespace wscsl::host
