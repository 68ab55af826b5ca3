// Runs of the wscsl binary for the tests that kill, interrupt or time processes.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "metrics_log.hpp"

namespace wscsl::test {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Finished {
  bool killed = false;  // by SIGKILL
  int status = -1;      // the exit status otherwise
  std::string text;     // stdout and stderr
};

class Launch {
 public:
  // Starts `wscsl <arguments>` with `fault` (empty: none) as WSCSL_FAULT_AT, after the shell
  // commands `setup` (e.g. limits).
  Launch(const std::string& arguments, const std::string& fault, const std::filesystem::path& log,
         const std::string& setup = "")
      : log_(log) {
    const std::string command =
        setup + " exec env WSCSL_PLUGIN_PATH=" WSCSL_PLUGIN_DIR " WSCSL_FAULT_AT='" + fault +
        "' " WSCSL_BINARY " " + arguments + " >" + log.string() + " 2>&1";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  // Kills it unless it ends within `seconds`, then waits for it.
  Finished kill_after(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid_, &raw_, WNOHANG) == pid_) return finished();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid_, SIGKILL);
    return wait();
  }
  Finished wait() {
    ::waitpid(pid_, &raw_, 0);
    return finished();
  }
  pid_t pid() const { return pid_; }

 private:
  Finished finished() const {
    Finished f;
    f.killed = WIFSIGNALED(raw_) && WTERMSIG(raw_) == SIGKILL;
    f.status = WIFEXITED(raw_) ? WEXITSTATUS(raw_) : -1;
    f.text = read_text(log_);
    return f;
  }

  std::filesystem::path log_;
  pid_t pid_ = -1;
  int raw_ = 0;
};

}  // namespace wscsl::test
