// `wscsl bench`: trains and evaluates several pipelines over several seeds, each run in its own
// run directory, and tabulates the results (results.md, results.csv) one row per method.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "wscsl/config/node.hpp"

namespace wscsl::host {

struct SuiteMethod {
  std::string name;                    // row label and run-directory name
  std::filesystem::path pipeline;      // resolved against the suite file
  std::vector<std::string> overrides;  // the method's own `set`
  std::vector<std::int64_t> seeds;     // the method's `seeds`, else the suite's
  SourceLocation where;                // of the [[methods]] entry
};

struct Suite {
  std::filesystem::path source;
  std::vector<std::int64_t> seeds;
  std::vector<std::string> overrides;  // suite-level `set`, applied to every method
  std::filesystem::path output;        // resolved against the suite file
  std::vector<SuiteMethod> methods;
  const ConfigNode* evaluators = nullptr;  // [[evaluators]] replacing every pipeline's, or null
  ConfigNode root;
};

// Reads and checks a suite file strictly (unknown keys and sections, types, duplicate names);
// throws ConfigError with every problem.
Suite read_suite(const std::filesystem::path& path);

// One (method, seed) run of a suite.
struct BenchRun {
  std::size_t method = 0;
  std::int64_t seed = 0;
  std::filesystem::path directory;  // <output>/<method name>/seed-<seed>
};
std::vector<BenchRun> bench_runs(const Suite& suite);

// The pipeline tree of one run: the method's file with the suite's, the method's and the command
// line's overrides, trainer.seed, trainer.threads = 1 when `single_thread`, and the suite's
// evaluators in place of the pipeline's.
ConfigNode run_pipeline(const Suite& suite, const BenchRun& run,
                        const std::vector<std::string>& extra_overrides, bool single_thread);

// The metrics of a finished run (its results.json) in file order; NaN for null values.
using RunMetrics = std::vector<std::pair<std::string, double>>;
RunMetrics read_results_json(const std::filesystem::path& path);

// A bench column: a heading and the metric it summarises (mean ± std over seeds).
struct BenchColumn {
  std::string heading;
  std::string metric;
};
// The columns present in `runs` (metrics by run), in the order of the papers' tables: GR, OT,
// triplet accuracy (condition-free for weak modules), reversed-valid proportion, then retrieval MAP
// per condition.
// Retrieval columns follow the order of the conditions in the results.
std::vector<BenchColumn> bench_columns(const std::vector<RunMetrics>& runs);

// Mean and sample standard deviation (0 for a single value) of the finite values.
struct MeanStd {
  double mean = 0.0, std = 0.0;
  std::size_t count = 0;
};
MeanStd mean_std(const std::vector<double>& values);

struct BenchArgs {
  std::filesystem::path suite;
  std::filesystem::path output;  // overrides the suite's output directory
  std::vector<std::string> overrides;
  std::int64_t jobs = 1;
  std::string only_run;  // internal: "<method>/<seed>" runs that one run in this process
};
int run_bench(const GlobalOptions& global, const BenchArgs& args, const std::string& command_line);

}  // namespace wscsl::host
