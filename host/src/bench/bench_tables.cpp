#include "bench_tables.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "run/clock.hpp"
#include "run/results.hpp"
#include "run/run_directory.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

std::string machine_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    model = line.substr(line.find(':') + 1);
    model.erase(0, model.find_first_not_of(' '));
    break;
  }
  return fmt::format("{}, {} hardware threads", model, std::thread::hardware_concurrency());
}

std::string percent(const MeanStd& m, bool with_std) {
  if (m.count == 0) return "-";
  return with_std ? fmt::format("{:.2f} ± {:.2f}", 100 * m.mean, 100 * m.std)
                  : fmt::format("{:.2f}", 100 * m.mean);
}

std::string csv_number(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// The PNGs of a finished run: its training curves and the evaluators' pictures.
std::vector<fs::path> run_pictures(const fs::path& directory) {
  std::vector<fs::path> pictures;
  std::error_code ec;
  const RunDirectory run(directory);
  if (fs::exists(run.curves(), ec)) pictures.push_back(run.curves());
  if (fs::is_directory(run.artifacts(), ec)) {
    std::vector<fs::path> plots;
    for (const auto& entry : fs::directory_iterator(run.artifacts(), ec))
      if (entry.path().extension() == ".png") plots.push_back(entry.path());
    std::sort(plots.begin(), plots.end());
    pictures.insert(pictures.end(), plots.begin(), plots.end());
  }
  return pictures;
}

}  // namespace

std::vector<BenchColumn> bench_columns(const std::vector<std::vector<DeclaredMetric>>& methods) {
  std::vector<BenchColumn> columns;
  for (const std::vector<DeclaredMetric>& declared : methods)
    for (const DeclaredMetric& m : declared) {
      if (m.column.empty()) continue;
      const bool seen = std::any_of(columns.begin(), columns.end(),
                                    [&](const BenchColumn& c) { return c.metric == m.name; });
      if (!seen) columns.push_back({m.column, m.name});
    }
  return columns;
}

MeanStd mean_std(const std::vector<double>& values) {
  MeanStd r;
  double sum = 0.0;
  for (double v : values)
    if (std::isfinite(v)) sum += v, ++r.count;
  if (r.count == 0) return r;
  r.mean = sum / static_cast<double>(r.count);
  if (r.count < 2) return r;
  double squares = 0.0;
  for (double v : values)
    if (std::isfinite(v)) squares += (v - r.mean) * (v - r.mean);
  r.std = std::sqrt(squares / static_cast<double>(r.count - 1));
  return r;
}

bool completed(const BenchRun& run) {
  std::error_code ec;
  return fs::exists(RunDirectory(run.directory).results_json(), ec);
}

void write_tables(const Suite& suite, const std::vector<BenchRun>& runs,
                  const std::vector<BenchColumn>& columns, const BenchProvenance& provenance) {
  std::vector<std::vector<std::map<std::string, double>>> by_method(suite.methods.size());
  std::vector<std::vector<std::int64_t>> seeds_done(suite.methods.size());
  for (const BenchRun& run : runs) {
    if (!completed(run)) continue;
    const RunResults results = read_results_json(RunDirectory(run.directory).results_json());
    by_method[run.method].emplace_back(results.metrics.begin(), results.metrics.end());
    seeds_done[run.method].push_back(run.seed);
  }
  std::string md = fmt::format("# Benchmark `{}`\n\n", suite.source.string());
  md += fmt::format("- command: `{}`\n", provenance.command_line);
  md += fmt::format("- machine: {}\n", machine_description());
  md += fmt::format("- {} parallel run{}, trainer.threads = {} per run\n", provenance.jobs,
                    provenance.jobs == 1 ? "" : "s", provenance.threads);
  md += fmt::format("- written {}\n\n", now_text("%Y-%m-%d %H:%M UTC", TimeZone::Utc));
  md +=
      "Accuracies and MAP in percent, mean ± sample standard deviation over the seeds that "
      "finished.\n\n| method | seeds |";
  std::string csv = "method,seeds";
  for (const BenchColumn& c : columns) {
    md += fmt::format(" {} |", c.heading);
    csv += "," + csv_field(c.metric + " mean") + "," + csv_field(c.metric + " std");
  }
  md += "\n|---|---|";
  for (std::size_t i = 0; i < columns.size(); ++i)
    md += "---:|";
  md += "\n";
  csv += "\n";
  for (std::size_t m = 0; m < suite.methods.size(); ++m) {
    const auto& seeds = seeds_done[m];
    std::string seed_list;
    for (std::size_t i = 0; i < seeds.size(); ++i)
      seed_list += fmt::format("{}{}", i ? " " : "", seeds[i]);
    md += fmt::format("| {} | {} |", suite.methods[m].name, seeds.empty() ? "none" : seed_list);
    csv += csv_field(suite.methods[m].name) + "," + csv_field(seed_list);
    for (const BenchColumn& c : columns) {
      std::vector<double> values;
      for (const auto& metrics : by_method[m]) {
        auto it = metrics.find(c.metric);
        if (it != metrics.end()) values.push_back(it->second);
      }
      const MeanStd ms = mean_std(values);
      md += fmt::format(" {} |", percent(ms, seeds.size() > 1));
      csv += ms.count ? fmt::format(",{},{}", csv_number(ms.mean), csv_number(ms.std)) : ",,";
    }
    md += "\n";
    csv += "\n";
  }
  md += "\n## Pictures (first finished seed of each method)\n\n";
  for (std::size_t m = 0; m < suite.methods.size(); ++m) {
    for (const BenchRun& run : runs) {
      if (run.method != m || !completed(run)) continue;
      for (const fs::path& p : run_pictures(run.directory))
        md += fmt::format("- {}: `{}`\n", suite.methods[m].name,
                          fs::relative(p, suite.output).string());
      break;
    }
  }
  write_file_atomically(suite.output / (suite.table + ".md"), md);
  write_file_atomically(suite.output / (suite.table + ".csv"), csv);
}

}  // namespace wscsl::host
