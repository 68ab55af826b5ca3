// The results a run writes, as JSON (nlohmann-json): results.json after the final evaluation and
// one metrics.jsonl line per epoch. Non-finite numbers are written as null and read back as NaN.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace wscsl::host {

struct RunResults {
  std::string checkpoint;                               // the evaluated checkpoint file
  std::int64_t epoch = 0;                               // epochs it had trained
  std::vector<std::pair<std::string, double>> metrics;  // in evaluation order
};

void write_results_json(const std::filesystem::path& path, const RunResults& results);
// Throws Error naming the file when it is not a results.json.
RunResults read_results_json(const std::filesystem::path& path);

// One metrics.jsonl line (without the newline), "epoch" first.
std::string metrics_line(const std::map<std::string, double>& numbers);
// The epoch of a metrics.jsonl line, or -1 when the line is not one.
std::int64_t metrics_line_epoch(const std::string& line);

// One value per epoch line of metrics.jsonl for every key (NaN where a line lacks it or holds
// null), in file order.
struct MetricsLog {
  std::vector<double> epochs;
  std::map<std::string, std::vector<double>> series;
};
MetricsLog read_metrics_log(const std::filesystem::path& path);

}  // namespace wscsl::host
