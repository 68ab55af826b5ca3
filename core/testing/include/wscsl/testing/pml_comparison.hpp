// Comparing an evaluator's metrics with pytorch-metric-learning's: a test writes the embeddings
// and labels into a folder, and a Python script of its own reads them with the metrics written
// here, computes the library's values and prints " ok" for each that agrees.
#pragma once

#include <sys/wait.h>

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "wscsl/plugin/evaluator.hpp"

namespace wscsl::test {

struct PmlComparison {
  bool exited = false;  // the script ran to its end (its status is `status`)
  int status = -1;      // 0: compared; 77: pytorch-metric-learning is absent (skip)
  std::string output;
  std::size_t agreed = 0;  // the lines reporting " ok"
};

// Writes `dir`/expected.txt (every per-condition metric, the ones named with a '/', at full
// precision) and runs `python script dir`.
inline PmlComparison compare_with_pml(const std::string& python, const std::string& script,
                                      const std::filesystem::path& dir,
                                      const std::vector<Metric>& metrics) {
  {
    std::ofstream expected(dir / "expected.txt");
    for (const Metric& m : metrics)
      if (m.name.find('/') != std::string::npos)
        expected << m.name << " " << fmt::format("{:.17g}", m.value) << "\n";
  }
  PmlComparison result;
  const std::string command = fmt::format("'{}' '{}' '{}' 2>&1", python, script, dir.string());
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    result.output = "popen failed for: " + command;
    return result;
  }
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe))
    result.output += buffer;
  const int status = ::pclose(pipe);
  result.exited = WIFEXITED(status);
  if (result.exited) result.status = WEXITSTATUS(status);
  for (std::size_t at = result.output.find(" ok"); at != std::string::npos;
       at = result.output.find(" ok", at + 1))
    ++result.agreed;
  return result;
}

}  // namespace wscsl::test
