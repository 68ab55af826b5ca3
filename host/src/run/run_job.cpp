#include "run_job.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clock.hpp"
#include "distributed/launchers.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

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
