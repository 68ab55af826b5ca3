#include "curves.hpp"

#include <algorithm>
#include <cmath>

#include "wscsl/plot/chart.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

bool is_summary_metric(const std::string& key) {
  if (key.rfind("val/", 0) != 0) return false;
  if (std::count(key.begin(), key.end(), '/') != 2) return false;
  return key.find('@') == std::string::npos && key.find("converged") == std::string::npos;
}

bool write_training_curves(const MetricsLog& log, const fs::path& png) {
  if (log.epochs.empty()) return false;
  std::vector<std::pair<std::string, std::vector<double>>> validation;
  for (const auto& [key, values] : log.series)
    if (is_summary_metric(key)) validation.emplace_back(key.substr(4), values);
  std::vector<std::pair<std::string, plot::Color>> entries;
  for (std::size_t i = 0; i < validation.size(); ++i)
    entries.emplace_back(validation[i].first, plot::palette(i));

  const int panel = 420, height = 320;
  const int legend_height = static_cast<int>(entries.size()) * (plot::Canvas::text_height() + 4);
  plot::Canvas canvas(2 * panel, height + legend_height + 10);
  const plot::Range epochs = plot::range_of(log.epochs, 0.02);
  const auto loss = log.series.find("loss");
  const std::vector<double> losses =
      loss == log.series.end() ? std::vector<double>(log.epochs.size(), NAN) : loss->second;
  plot::Axes left(canvas, {0, 0, panel, height}, epochs, plot::range_of(losses), "training loss",
                  "epoch", "loss");
  // Lines join the epochs; dots keep a single epoch visible.
  left.line(log.epochs, losses, plot::palette(0));
  left.scatter(log.epochs, losses, std::vector<plot::Color>(losses.size(), plot::palette(0)), 3);
  std::vector<double> all;
  for (const auto& v : validation)
    all.insert(all.end(), v.second.begin(), v.second.end());
  plot::Axes right(canvas, {panel, 0, panel, height}, epochs, plot::range_of(all),
                   "validation metrics", "epoch", "value");
  for (std::size_t i = 0; i < validation.size(); ++i) {
    right.line(log.epochs, validation[i].second, plot::palette(i));
    right.scatter(log.epochs, validation[i].second,
                  std::vector<plot::Color>(log.epochs.size(), plot::palette(i)), 3);
  }
  plot::legend(canvas, panel + 10, height + 5, entries);
  canvas.save_png(png);
  return true;
}

}  // namespace wscsl::host
