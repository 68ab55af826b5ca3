#include "run_job.hpp"

#include <unistd.h>

#include <charconv>
#include <climits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clock.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

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

std::string continuing_text(const World& world, const JobIdentity& me, const RunDirectory& run) {
  if (world.launcher == Launcher::Slurm)
    return fmt::format("Slurm requeued the job (restart {}): continuing {}", me.restart,
                       run.root().string());
  return fmt::format("torchrun restarted the job (restart {} of {}): continuing {}", world.restart,
                     world.max_restarts, run.root().string());
}

void write_run_job(const RunDirectory& run, const JobIdentity& me, const fs::path& pipeline) {
  const nlohmann::ordered_json record = {
      {"job", me.job},
      {"launcher", launcher_name(me.launcher)},
      {"pipeline", fs::absolute(pipeline).lexically_normal().string()},
      {"written", now_text("%Y-%m-%dT%H:%M:%SZ", TimeZone::Utc)}};
  write_file_atomically(run.job(), record.dump(2) + "\n");
}

void require_own_run(const RunDirectory& run, const JobIdentity& me,
                     const std::string& resume_command) {
  std::error_code ec;
  std::string theirs = "no job (it was written by a wscsl that did not record one)";
  if (fs::exists(run.job(), ec)) {
    const auto record =
        nlohmann::json::parse(read_text_file(run.job()), nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("job") || !record["job"].is_string())
      throw Error(
          fmt::format("{}: not the record of a job ({{\"job\": …}}) that wscsl writes; "
                      "resume the run with `{}` or give this job another --run-dir",
                      run.job().string(), resume_command));
    theirs = record["job"].get<std::string>();
    if (theirs == me.job) return;
  }
  throw Error(fmt::format(
      "{} holds a run of {}, not of this job ({}), which {} started again: resume it with `{}` "
      "or give this job another --run-dir",
      run.root().string(), theirs, me.job, launcher_name(me.launcher), resume_command));
}

}  // namespace wscsl::host
