#include "wscsl/testing/memory_limit.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <new>

#include "wscsl/error.hpp"

namespace wscsl::testing {
namespace {

// The address space the process has mapped now, from /proc/self/status (VmSize, in kB).
std::size_t mapped_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      std::size_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
    std::getline(status, key);
  }
  return 0;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The child's end: one letter for the outcome, then the message.
[[noreturn]] void run_child(const std::function<void()>& read, std::size_t extra_bytes, int fd) {
  const rlimit limit{mapped_bytes() + extra_bytes, mapped_bytes() + extra_bytes};
  std::string report;
  if (::setrlimit(RLIMIT_AS, &limit) != 0) {
    report = "Fsetrlimit failed";
  } else {
    try {
      read();
      report = "0";
    } catch (const DataError& e) {
      report = std::string("R") + e.what();
    } catch (const std::bad_alloc&) {
      report = "M";
    } catch (const std::exception& e) {
      report = std::string("F") + e.what();
    }
  }
  write_all(fd, report);
  ::_exit(0);
}

}  // namespace

bool memory_limit_available() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

LimitedRun run_with_memory_limit(const std::function<void()>& read, std::size_t extra_bytes) {
  int fds[2];
  if (::pipe(fds) != 0) return {LimitedRun::Outcome::Failed, "pipe failed"};
  const pid_t child = ::fork();
  if (child < 0) return {LimitedRun::Outcome::Failed, "fork failed"};
  if (child == 0) {
    ::close(fds[0]);
    run_child(read, extra_bytes, fds[1]);
  }
  ::close(fds[1]);
  std::string report;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0)
    report.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (report.empty() || !WIFEXITED(status))
    return {LimitedRun::Outcome::Failed,
            WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                : "the child reported nothing"};
  const std::string message = report.substr(1);
  switch (report[0]) {
    case '0':
      return {LimitedRun::Outcome::Returned, message};
    case 'R':
      return {LimitedRun::Outcome::Refused, message};
    case 'M':
      return {LimitedRun::Outcome::OutOfMemory, message};
    default:
      return {LimitedRun::Outcome::Failed, message};
  }
}

}  // namespace wscsl::testing
