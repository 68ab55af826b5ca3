#include "results.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

Json number(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

double number_of(const Json& value) {
  return value.is_number() ? value.get<double>() : kNan;
}

}  // namespace

void write_results_json(const fs::path& path, const RunResults& results) {
  Json metrics = Json::object();
  for (const auto& [name, value] : results.metrics)
    metrics[name] = number(value);
  const Json document = {
      {"checkpoint", results.checkpoint}, {"epoch", results.epoch}, {"metrics", metrics}};
  write_file_atomically(path, document.dump(2) + "\n");
}

RunResults read_results_json(const fs::path& path) {
  const Json document = Json::parse(read_text_file(path), nullptr, /*allow_exceptions=*/false);
  const auto* metrics =
      document.is_object() && document.contains("metrics") ? &document.at("metrics") : nullptr;
  if (!metrics || !metrics->is_object() || !document.contains("checkpoint") ||
      !document.contains("epoch") || !document.at("epoch").is_number_integer())
    throw Error(fmt::format(
        "{}: not a wscsl results.json (expected an object with checkpoint, epoch and metrics)",
        path.string()));
  RunResults results;
  results.checkpoint = document.at("checkpoint").is_string()
                           ? document.at("checkpoint").get<std::string>()
                           : std::string();
  results.epoch = document.at("epoch").get<std::int64_t>();
  for (const auto& [name, value] : metrics->items())
    results.metrics.emplace_back(name, number_of(value));
  return results;
}

std::string metrics_line(const std::map<std::string, double>& numbers) {
  Json line = Json::object();
  // "epoch" leads so the line is easy to scan.
  if (auto it = numbers.find("epoch"); it != numbers.end())
    line["epoch"] = static_cast<std::int64_t>(it->second);
  for (const auto& [key, value] : numbers)
    if (key != "epoch") line[key] = number(value);
  return line.dump();
}

std::int64_t metrics_line_epoch(const std::string& line) {
  const Json parsed = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("epoch") || !parsed.at("epoch").is_number())
    return -1;
  return parsed.at("epoch").get<std::int64_t>();
}

MetricsLog read_metrics_log(const fs::path& path) {
  MetricsLog log;
  std::istringstream in(read_text_file(path));
  std::string line;
  while (std::getline(in, line)) {
    const Json parsed = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object()) continue;
    const std::size_t row = log.epochs.size();
    log.epochs.push_back(kNan);
    for (auto& [key, values] : log.series)
      values.push_back(kNan);
    for (const auto& [key, value] : parsed.items()) {
      if (key == "epoch") {
        log.epochs[row] = number_of(value);
        continue;
      }
      auto& values = log.series[key];
      values.resize(row + 1, kNan);
      values[row] = number_of(value);
    }
  }
  return log;
}

}  // namespace wscsl::host
