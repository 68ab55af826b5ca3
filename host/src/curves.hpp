// Training curves of a run, drawn from its metrics.jsonl: the epoch loss, and the validation
// metrics that summarise an evaluator (val/<evaluator>/<metric>, not per condition).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace wscsl::host {

// One value per epoch line of metrics.jsonl for every key (NaN where a line lacks it or holds
// null), in file order.
struct MetricsLog {
  std::vector<double> epochs;
  std::map<std::string, std::vector<double>> series;
};
MetricsLog read_metrics_log(const std::filesystem::path& path);

// The validation series a curve is drawn for: "val/<evaluator>/<metric>" without a condition or
// a sweep point, and not a 0/1 flag such as ot_converged.
bool is_summary_metric(const std::string& key);

// Writes the loss and validation curves of `log` as a PNG; false (nothing written) when the log
// has no epoch yet.
bool write_training_curves(const MetricsLog& log, const std::filesystem::path& png);

}  // namespace wscsl::host
