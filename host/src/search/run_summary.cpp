#include "run_summary.hpp"

#include <cmath>

#include <fmt/format.h>

#include "run/results.hpp"
#include "searcher.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wscsl::host::search {

json run_summary(IndexSearcher& searcher) {
  const IndexManifest& m = searcher.manifest();
  const RunDirectory& run = searcher.model().run;
  json results = json::array();
  if (fs::exists(run.results_json()))
    for (const auto& [metric, value] : read_results_json(run.results_json()).metrics)
      results.push_back({metric, std::isfinite(value) ? json(value) : json(nullptr)});
  json alignment = json::array();
  for (const IndexedCondition& c : m.conditions) {
    // The OT plan's accuracy (the alignment the index uses), else another criterion's.
    json accuracy = nullptr;
    for (const char* criterion : {"/ot_accuracy/", "_accuracy/"})
      for (const json& r : results) {
        const std::string metric = r[0].get<std::string>();
        if (accuracy.is_null() && metric.rfind("alignment", 0) == 0 &&
            metric.size() > c.name.size() &&
            metric.compare(metric.size() - c.name.size(), c.name.size(), c.name) == 0 &&
            metric.find(criterion) != std::string::npos)
          accuracy = r[1];
      }
    alignment.push_back(
        {{"condition", c.name},
         {"embedding",
          c.embedding < 0 ? json("every psi") : json(fmt::format("psi{}", c.embedding + 1))},
         {"comparison", spelling(c.comparison)},
         {"accuracy", accuracy}});
  }
  json curves = {{"epochs", json::array()}, {"series", json::object()}};
  if (fs::exists(run.metrics())) {
    const MetricsLog log = read_metrics_log(run.metrics());
    for (double e : log.epochs)
      curves["epochs"].push_back(e);
    for (const auto& [key, values] : log.series) {
      json series = json::array();
      for (double v : values)
        series.push_back(std::isfinite(v) ? json(v) : json(nullptr));
      curves["series"][key] = series;
    }
  }
  const std::string rows_key =
      sha256_hex(m.checkpoint_sha256 + "\n" + (m.inputs.empty() ? "" : m.inputs.front()));
  return {{"name", run.root().filename().string()},
          {"link", fmt::format("{}.{}", run.root().filename().string(), rows_key.substr(0, 8))},
          {"index", searcher.index().string()},
          {"run", m.run},
          {"rows", m.rows()},
          {"module", m.condition_module},
          {"supervision", m.supervision},
          {"alignment", {{"source", m.alignment}, {"conditions", alignment}}},
          {"results", results},
          {"curves", curves}};
}

}  // namespace wscsl::host::search
