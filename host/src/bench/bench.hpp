// `wscsl bench`: trains and evaluates several pipelines over several seeds, each run in its own
// run directory, and tabulates the results (results.md, results.csv) one row per method.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_suite.hpp"
#include "cli/commands.hpp"

namespace wscsl::host {

struct BenchArgs {
  std::filesystem::path suite;
  std::filesystem::path output;  // overrides the suite's output directory
  std::vector<std::string> overrides;
  std::int64_t jobs = 1;
  std::vector<std::int64_t> seeds;  // replaces the seeds of the suite and of every method
  std::string only_run;             // internal: "<method>/<seed>" runs that one run in this process
};
int run_bench(const GlobalOptions& global, const BenchArgs& args, const std::string& command_line);

}  // namespace wscsl::host
