// A bench suite: the methods (pipelines) and seeds `wscsl bench` trains, and each run's pipeline.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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
  std::string table = "results";       // the tables are <output>/<table>.md and .csv
  std::vector<SuiteMethod> methods;
  const ConfigNode* evaluators = nullptr;  // [[evaluators]] replacing every pipeline's, or null
  ConfigNode root;
};

// Reads and checks a suite file strictly (unknown keys and sections, types, duplicate names);
// throws ConfigError with every problem.
Suite read_suite(const std::filesystem::path& path);

// What is wrong with a list of seeds (each >= 0, no two alike); empty when nothing is.
std::vector<std::string> seed_problems(const std::vector<std::int64_t>& seeds);

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

// "<method>/<seed>": how a run is named on the command line and in messages.
std::string run_label(const Suite& suite, const BenchRun& run);

}  // namespace wscsl::host
