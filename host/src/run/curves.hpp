// Training curves of a run, drawn from its metrics.jsonl: the epoch loss, and the validation
// metrics that summarise an evaluator (val/<evaluator>/<metric>, not per condition).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "results.hpp"

namespace wscsl::host {

// The validation series a curve is drawn for: "val/<evaluator>/<metric>" without a condition or
// a sweep point, and not a 0/1 flag such as ot_converged.
bool is_summary_metric(const std::string& key);

// Writes the loss and validation curves of `log` as a PNG; false (nothing written) when the log
// has no epoch yet.
bool write_training_curves(const MetricsLog& log, const std::filesystem::path& png);

}  // namespace wscsl::host
