// `wscsl bench`: trains and evaluates several pipelines over several seeds, each run in its own
// run directory, and tabulates the results (results.md, results.csv) one row per method.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_suite.hpp"
#include "pipeline/session.hpp"

namespace wscsl::host {

struct BenchArgs {
  std::filesystem::path suite;
  std::vector<std::filesystem::path> runs;  // --runs: tabulate these finished runs, train nothing
  std::filesystem::path output;             // overrides the suite's output directory
  std::vector<std::string> overrides;
  std::int64_t jobs = 1;
  std::vector<std::int64_t> seeds;  // replaces the seeds of the suite and of every method
  std::string only_run;             // internal: "<method>/<seed>" runs that one run in this process
};
int run_bench(const GlobalOptions& global, const BenchArgs& args, const std::string& command_line);
// `wscsl bench --runs R1 R2 ... --output DIR`: the tables of runs already trained and evaluated
// (each with its results.json), one row per run named by its directory, columns from each run's
// own pipeline; nothing trains.
int tabulate_runs(const GlobalOptions& global, const BenchArgs& args,
                  const std::string& command_line);

}  // namespace wscsl::host
