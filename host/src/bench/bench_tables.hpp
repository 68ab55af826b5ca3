// The tables of a bench: results.md and results.csv, one row per method, one column per metric
// the evaluators declare a bench column for, mean ± sample standard deviation over the seeds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_suite.hpp"
#include "pipeline/pipeline.hpp"

namespace wscsl::host {

// A bench column: a heading and the metric it summarises (mean ± std over seeds).
struct BenchColumn {
  std::string heading;
  std::string metric;
};
// The columns the methods' evaluators declare (DeclaredMetric::column), in the order of their
// first appearance over the methods.
std::vector<BenchColumn> bench_columns(const std::vector<std::vector<DeclaredMetric>>& methods);

// Mean and sample standard deviation (0 for a single value) of the finite values.
struct MeanStd {
  double mean = 0.0, std = 0.0;
  std::size_t count = 0;
};
MeanStd mean_std(const std::vector<double>& values);

// What the tables' header says about how the bench ran.
struct BenchProvenance {
  std::string command_line;
  std::int64_t jobs = 1;
  std::string threads;  // trainer.threads of the runs, e.g. "1" or "1, 2"
};

// Whether `run` has finished (its results.json exists).
bool completed(const BenchRun& run);

// Writes results.md and results.csv in the suite's output directory from the finished runs.
void write_tables(const Suite& suite, const std::vector<BenchRun>& runs,
                  const std::vector<BenchColumn>& columns, const BenchProvenance& provenance);

}  // namespace wscsl::host
