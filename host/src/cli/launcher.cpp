#include "launcher.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "distributed/loopback_port.hpp"
#include "wscsl/error.hpp"

extern char** environ;

namespace wscsl::host {
namespace {

constexpr int kMaxLocalProcesses = 1024;

// The running ranks' process ids (-1 once reaped), shared with the signal handler.
volatile std::sig_atomic_t g_signalled = 0;
pid_t g_ranks[kMaxLocalProcesses];
volatile std::sig_atomic_t g_rank_count = 0;

extern "C" void forward_signal(int) {
  g_signalled = 1;  // not ++: C++20 (PyTorch 2.15 asks for it) deprecates ++ on a volatile
  for (int i = 0; i < g_rank_count; ++i)
    if (g_ranks[i] > 0) ::kill(g_ranks[i], SIGTERM);
}

// The variables of a job, which the ranks get from this launcher alone: a job of torchrun's or
// Slurm's around this launcher would make them its own ranks instead.
bool describes_a_job(const std::string& name) {
  static const char* const kJob[] = {
      "MASTER_ADDR", "MASTER_PORT",      "WORLD_SIZE", "RANK",
      "LOCAL_RANK",  "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
      "ROLE_RANK",   "ROLE_WORLD_SIZE",  "WSCSL_NPROC"};
  for (const char* job : kJob)
    if (name == job) return true;
  return name.rfind("TORCHELASTIC_", 0) == 0;
}

std::vector<std::string> rank_environment(int rank, int processes, std::uint16_t port) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!describes_a_job(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back(fmt::format("MASTER_PORT={}", port));
  env.push_back(fmt::format("WORLD_SIZE={}", processes));
  env.push_back(fmt::format("LOCAL_WORLD_SIZE={}", processes));
  env.push_back(fmt::format("RANK={}", rank));
  env.push_back(fmt::format("LOCAL_RANK={}", rank));
  env.push_back(fmt::format("WSCSL_NPROC={}", processes));
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings)
    p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

int exit_code(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

int launch_local(int processes, const std::vector<std::string>& args, int grace_s) {
  if (processes < 1 || processes > kMaxLocalProcesses)
    throw Error(fmt::format("--nproc {} is out of range (expected 1 to {})", processes,
                            kMaxLocalProcesses));
  const std::uint16_t port = unclaimed_loopback_port();
  if (port == 0)
    throw Error(
        "cannot find a free loopback port below net.ipv4.ip_local_port_range for the ranks' "
        "rendezvous; start them with torchrun and a MASTER_PORT of your choice instead");
  std::vector<std::string> argv_strings = args;
  argv_strings.insert(argv_strings.begin(), "wscsl");
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<std::vector<std::string>> environments;
  for (int rank = 0; rank < processes; ++rank)
    environments.push_back(rank_environment(rank, processes, port));
  const pid_t launcher = ::getpid();

  std::signal(SIGINT, forward_signal);
  std::signal(SIGTERM, forward_signal);
  for (int rank = 0; rank < processes; ++rank) {
    std::vector<char*> envp = pointers(environments[static_cast<std::size_t>(rank)]);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(fmt::format("cannot start rank {}: {}", rank, std::strerror(errno)));
    if (pid == 0) {
      // Signals reach the ranks through the launcher only, once each; a launcher that dies
      // (even by SIGKILL) stops its ranks.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != launcher) ::_exit(1);
      if (rank > 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, STDOUT_FILENO);
      }
      ::execve("/proc/self/exe", argv.data(), envp.data());
      ::_exit(127);
    }
    g_ranks[rank] = pid;
    g_rank_count = rank + 1;
  }

  int first_failed = -1;
  int first_status = 0;
  int interrupted_status = 0;
  int running = processes;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, first_failed < 0 ? 0 : WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (int rank = 0; rank < processes; ++rank)
          if (g_ranks[rank] > 0) ::kill(g_ranks[rank], SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    int rank = 0;
    while (rank < processes && g_ranks[rank] != pid)
      ++rank;
    if (rank == processes) continue;
    g_ranks[rank] = -1;
    --running;
    const bool interrupted = g_signalled != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 130;
    if (interrupted) interrupted_status = 130;
    if (status != 0 && !interrupted && first_failed < 0) {
      first_failed = rank;
      first_status = status;
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace_s);
    }
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (first_failed >= 0) {
    fmt::print(stderr, "wscsl: rank {} of {} {}; the job stopped\n", first_failed, processes,
               describe_status(first_status));
    return exit_code(first_status);
  }
  return interrupted_status;
}

}  // namespace wscsl::host
