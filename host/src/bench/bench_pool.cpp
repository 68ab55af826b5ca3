#include "bench_pool.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "train/trainer.hpp"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

std::vector<std::string> execute_in_children(const GlobalOptions& global, const Suite& suite,
                                             const BenchArgs& args,
                                             const std::vector<BenchRun>& pending) {
  std::map<pid_t, const BenchRun*> running;
  std::vector<std::string> failed;
  std::size_t next = 0;
  auto wait_one = [&] {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) return;
    auto it = running.find(pid);
    if (it == running.end()) return;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const std::string label = run_label(suite, *it->second);
    const fs::path log = it->second->directory / "bench.log";
    fmt::print("{} {}{}\n", label, ok ? "finished" : "FAILED",
               ok ? "" : fmt::format(" (see {})", log.string()));
    std::fflush(stdout);
    if (!ok) failed.push_back(label);
    running.erase(it);
  };
  while (next < pending.size() || !running.empty()) {
    if (next < pending.size() && static_cast<std::int64_t>(running.size()) < args.jobs &&
        !stop_requested()) {
      const BenchRun& run = pending[next++];
      std::vector<std::string> argv = {"wscsl"};
      for (const fs::path& p : global.plugin_paths)
        argv.insert(argv.end(), {"--plugin-path", p.string()});
      argv.insert(argv.end(),
                  {"bench", args.suite.string(), "--output", suite.output.string(), "--jobs",
                   std::to_string(args.jobs), "--run", run_label(suite, run)});
      for (const std::string& o : args.overrides)
        argv.insert(argv.end(), {"--set", o});
      for (std::int64_t seed : args.seeds)
        argv.insert(argv.end(), {"--seeds", std::to_string(seed)});
      std::error_code ec;
      fs::create_directories(run.directory, ec);
      const std::string log = (run.directory / "bench.log").string();
      std::vector<char*> raw;
      for (std::string& a : argv)
        raw.push_back(a.data());
      raw.push_back(nullptr);
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = ::fork();
      if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
          ::dup2(fd, STDOUT_FILENO);
          ::dup2(fd, STDERR_FILENO);
          ::close(fd);
        }
        ::execv("/proc/self/exe", raw.data());
        ::_exit(127);
      }
      if (pid < 0) throw Error(fmt::format("cannot start the run {}", run_label(suite, run)));
      fmt::print("{} started (log {})\n", run_label(suite, run), log);
      std::fflush(stdout);
      running[pid] = &run;
      continue;
    }
    if (running.empty()) break;  // stop requested: nothing more is started
    wait_one();
  }
  for (std::size_t i = next; i < pending.size(); ++i)
    failed.push_back(run_label(suite, pending[i]) + " (not started)");
  return failed;
}

}  // namespace wscsl::host
