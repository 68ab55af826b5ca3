#include "run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "event_log.hpp"
#include "results.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

void refuse_a_run_with_checkpoints(const RunDirectory& run, const std::string& resume_command) {
  if (run.last_checkpoints().empty()) return;
  throw Error(fmt::format("{} already holds a run; resume it with `{}` or choose another --run-dir",
                          run.root().string(), resume_command));
}

RunDirectory RunDirectory::create(const fs::path& root) {
  refuse_a_run_with_checkpoints(RunDirectory(root),
                                fmt::format("wscsl train --resume {}", root.string()));
  std::error_code ec;
  fs::create_directories(root / "checkpoints", ec);
  if (ec)
    throw Error(fmt::format("cannot create run directory {}: {}", root.string(), ec.message()));
  return RunDirectory(root);
}

RunDirectory RunDirectory::open(const fs::path& root) {
  RunDirectory run(root);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw Error(fmt::format("{} is not a run directory", root.string()));
  if (!fs::exists(run.resolved(), ec))
    throw Error(fmt::format("{} is not a run directory: it has no resolved.toml", root.string()));
  return run;
}

namespace {

// Rewrites `path` keeping the lines `keep` accepts.
template <class Keep>
void filter_lines(const fs::path& path, Keep keep) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  std::istringstream in(read_text_file(path));
  std::string kept, line;
  while (std::getline(in, line))
    if (keep(line)) kept += line + "\n";
  write_file_atomically(path, kept);
}

}  // namespace

RunLock::RunLock(const RunDirectory& run) {
  const fs::path file = run.root() / "lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(fmt::format("cannot open {}: {}", file.string(), std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    throw Error(
        fmt::format("{} is being written by another wscsl (process {}); wait for it to "
                    "finish or stop it first",
                    run.root().string(), n > 0 ? std::string(holder, n) : "unknown"));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0)
    throw Error(fmt::format("cannot write {}: {}", file.string(), std::strerror(errno)));
  // Holding the lock, no other process writes here: temporary files are a killed writer's.
  remove_abandoned_writes(run.root());
  remove_abandoned_writes(run.root() / "checkpoints");
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

bool resumable(const RunDirectory& run) {
  if (!run.last_checkpoints().empty()) return true;
  run.truncate_logs(0, 0);
  std::error_code ec;
  fs::create_directories(run.root() / "checkpoints", ec);
  return false;
}

namespace {

// last.pt for age 0, last.<age>.pt for older ones.
fs::path last_of_age(const RunDirectory& run, std::int64_t age) {
  return run.checkpoint(age == 0 ? std::string("last") : fmt::format("last.{}", age));
}

// Ages beyond any sensible keep_last, so that a lowered keep_last still finds the old files.
constexpr std::int64_t kMaxAge = 100;

}  // namespace

std::vector<fs::path> RunDirectory::last_checkpoints() const {
  std::vector<fs::path> found;
  std::error_code ec;
  for (std::int64_t age = 0; age <= kMaxAge; ++age)
    if (fs::exists(last_of_age(*this, age), ec)) found.push_back(last_of_age(*this, age));
  return found;
}

void RunDirectory::rotate_last(std::int64_t keep) const {
  std::error_code ec;
  for (std::int64_t age = kMaxAge; age >= 0; --age) {
    const fs::path from = last_of_age(*this, age);
    // With keep_last = 1 the new last.pt replaces the old one atomically: nothing to move.
    if (!fs::exists(from, ec) || (age == 0 && keep == 1)) continue;
    if (age + 1 >= keep) {
      fs::remove(from, ec);
    } else {
      fs::rename(from, last_of_age(*this, age + 1), ec);
    }
    if (ec)
      throw Error(fmt::format("cannot make room for a new checkpoint in {}: {}",
                              (root_ / "checkpoints").string(), ec.message()));
  }
}

void RunDirectory::truncate_logs(std::int64_t epochs_done, std::int64_t global_step) const {
  filter_lines(steps(), [&](const std::string& line) {
    if (line.empty() || line[0] == '#') return true;
    return std::stoll(line.substr(0, line.find('\t'))) <= global_step;
  });
  filter_lines(metrics(), [&](const std::string& line) {
    const std::int64_t epoch = metrics_line_epoch(line);
    return epoch >= 0 && epoch <= epochs_done;
  });
  filter_lines(replicas(), [&](const std::string& line) {
    return !line.empty() && std::stoll(line.substr(0, line.find('\t'))) <= epochs_done;
  });
  truncate_event_files(root_, epochs_done, global_step);
}

}  // namespace wscsl::host
