// A command line run through the shell, its exit status and output collected: for the tests that
// run the `wscsl` executable (which define WSCSL_BINARY and WSCSL_PLUGIN_DIR).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace wscsl::test {

struct Output {
  int status = -1;   // the exit status; -1 when the command did not exit normally
  std::string text;  // stdout and stderr
};

inline Output run_command(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  Output out;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe))
    out.text += buffer.data();
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

// `wscsl <arguments>` with the build tree's plugins.
inline Output run_wscsl(const std::string& arguments) {
  return run_command("WSCSL_PLUGIN_PATH=" WSCSL_PLUGIN_DIR " " WSCSL_BINARY " " + arguments);
}

}  // namespace wscsl::test
