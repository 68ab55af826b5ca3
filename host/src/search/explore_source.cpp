#include "explore_source.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "dataset_attributes.hpp"
#include "run/results.hpp"
#include "searcher.hpp"
#include "wscsl/error.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"
#include "wscsl/util/clock.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wscsl::host::search {

namespace {

constexpr std::size_t kKeptPictures = 8192;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string png_of(const torch::Tensor& picture) {
  plot::Canvas canvas(static_cast<int>(picture.size(2)), static_cast<int>(picture.size(1)));
  canvas.image(picture, 0, 0, canvas.width(), canvas.height());
  return canvas.png();
}

}  // namespace

struct ExploreSource::State {
  std::unique_ptr<IndexSearcher> searcher;
  std::vector<std::string> dataset_conditions;
  DatasetImages dataset;
  std::vector<std::string> labels;  // of every row (ExploreSource::label), read on first use
  std::unordered_map<std::string, std::int64_t> rows_by_label;
  std::unordered_map<std::int64_t, std::string> pictures;

  void read_labels();
  const std::vector<std::string>* attributes_of(std::int64_t row) {
    read_labels();
    const auto it = dataset.attributes.find(labels[static_cast<std::size_t>(row)]);
    return it == dataset.attributes.end() ? nullptr : &it->second;
  }
  json attributes_json(const std::vector<std::string>* values) {
    json out = json::object();
    if (values)
      for (std::size_t f = 0; f < values->size(); ++f)
        if (!(*values)[f].empty()) out[dataset_conditions[f]] = (*values)[f];
    return out;
  }
  json neighbours(const ItemFeatures& query, const std::vector<std::string>* query_values,
                  std::int64_t k, const std::vector<std::string>& conditions, std::int64_t exclude);
};

void ExploreSource::State::read_labels() {
  if (!labels.empty()) return;
  labels.reserve(static_cast<std::size_t>(searcher->rows()));
  for (std::int64_t row = 0; row < searcher->rows(); ++row) {
    const std::string indexed = searcher->image(row).label();
    const auto file = dataset.files.find(indexed);
    labels.push_back(file == dataset.files.end() ? indexed : file->second);
    rows_by_label.emplace(labels.back(), row);
    rows_by_label.emplace(indexed, row);
  }
}

json ExploreSource::State::neighbours(const ItemFeatures& query,
                                      const std::vector<std::string>* query_values, std::int64_t k,
                                      const std::vector<std::string>& conditions,
                                      std::int64_t exclude) {
  const auto start = std::chrono::steady_clock::now();
  SearchOptions options;
  options.k = k;
  options.pool = std::max(kDefaultPool, k);
  for (const std::string& c : conditions)
    for (const IndexedCondition& held : searcher->manifest().conditions)
      if (held.name == c) options.conditions.push_back(c);
  const std::vector<ConditionNeighbours> found = options.conditions.empty()
                                                     ? std::vector<ConditionNeighbours>{}
                                                     : searcher->search(query, options, exclude);
  json columns = json::array();
  for (const ConditionNeighbours& c : found) {
    const auto f = std::find(dataset_conditions.begin(), dataset_conditions.end(), c.condition);
    const bool labelled = f != dataset_conditions.end();
    const auto at = static_cast<std::size_t>(f - dataset_conditions.begin());
    json list = json::array();
    for (const Neighbour& n : c.neighbours) {
      json same = nullptr;
      const std::vector<std::string>* values = attributes_of(n.row);
      if (labelled && query_values && values && !(*query_values)[at].empty() &&
          !(*values)[at].empty())
        same = (*query_values)[at] == (*values)[at];
      list.push_back({{"row", n.row},
                      {"label", labels[static_cast<std::size_t>(n.row)]},
                      {"distance", n.distance},
                      {"same", same}});
    }
    columns.push_back({{"condition", c.condition}, {"labelled", labelled}, {"neighbours", list}});
  }
  const double ms = milliseconds_since(start);
  return {{"conditions", columns}, {"server_ms", ms}};
}

ExploreSource::ExploreSource(const GlobalOptions& global, const fs::path& target,
                             const fs::path& run, const std::string& run_option)
    : state_(std::make_unique<State>()) {
  const SearchTarget t = search_target(target, run);
  state_->searcher = std::make_unique<IndexSearcher>(global, t.index, t.run, run_option);
  Dataset& dataset = *state_->searcher->model().pipeline().dataset;
  state_->dataset_conditions = dataset.info().condition_names();
  state_->dataset = dataset_images(dataset);
}

ExploreSource::~ExploreSource() = default;

const fs::path& ExploreSource::index() const {
  return state_->searcher->index();
}
const fs::path& ExploreSource::run() const {
  return state_->searcher->model().run.root();
}
std::int64_t ExploreSource::rows() const {
  return state_->searcher->rows();
}

std::vector<std::string> ExploreSource::conditions() const {
  std::vector<std::string> out;
  for (const IndexedCondition& c : state_->searcher->manifest().conditions)
    out.push_back(c.name);
  return out;
}

json ExploreSource::summary() const {
  const IndexManifest& m = state_->searcher->manifest();
  const RunDirectory& run = state_->searcher->model().run;
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
          {"index", index().string()},
          {"run", m.run},
          {"rows", m.rows()},
          {"module", m.condition_module},
          {"supervision", m.supervision},
          {"alignment", {{"source", m.alignment}, {"conditions", alignment}}},
          {"results", results},
          {"curves", curves}};
}

json ExploreSource::gallery(std::int64_t offset, std::int64_t limit, const std::string& filter) {
  State& s = *state_;
  s.read_labels();
  std::vector<std::string> words;
  std::istringstream split(lower(filter));
  for (std::string w; split >> w;)
    words.push_back(w);
  const auto matches = [&](std::int64_t row) {
    if (words.empty()) return true;
    std::string text = lower(s.labels[static_cast<std::size_t>(row)]);
    if (const auto* values = s.attributes_of(row))
      for (std::size_t f = 0; f < values->size(); ++f)
        text += " " + lower(s.dataset_conditions[f]) + "=" + lower((*values)[f]);
    return std::all_of(words.begin(), words.end(),
                       [&](const std::string& w) { return text.find(w) != std::string::npos; });
  };
  json items = json::array();
  std::int64_t found = 0;
  for (std::int64_t row = 0; row < rows(); ++row) {
    if (!matches(row)) continue;
    if (found >= offset && found < offset + limit)
      items.push_back({{"row", row},
                       {"label", s.labels[static_cast<std::size_t>(row)]},
                       {"attributes", s.attributes_json(s.attributes_of(row))}});
    ++found;
  }
  return {{"total", rows()}, {"matches", found}, {"offset", offset}, {"items", items}};
}

json ExploreSource::neighbours_of_row(std::int64_t row, std::int64_t k,
                                      const std::vector<std::string>& conditions) {
  State& s = *state_;
  if (row < 0 || row >= rows())
    throw Error(
        fmt::format("{} has no row {}: it holds rows 0 to {}", index().string(), row, rows() - 1));
  s.read_labels();
  json out = s.neighbours(s.searcher->item(row), s.attributes_of(row), k, conditions, row);
  out["query"] = {{"row", row},
                  {"label", s.labels[static_cast<std::size_t>(row)]},
                  {"attributes", s.attributes_json(s.attributes_of(row))}};
  return out;
}

json ExploreSource::neighbours_of_file(const fs::path& file, const std::string& shown,
                                       std::int64_t k, const std::vector<std::string>& conditions) {
  State& s = *state_;
  s.read_labels();
  const auto known = s.dataset.attributes.find(fs::weakly_canonical(file).string());
  const std::vector<std::string>* values =
      known == s.dataset.attributes.end() ? nullptr : &known->second;
  json out = s.neighbours(s.searcher->embed_query(file, shown), values, k, conditions, -1);
  out["query"] = {{"row", nullptr}, {"label", shown}, {"attributes", s.attributes_json(values)}};
  return out;
}

std::optional<std::int64_t> ExploreSource::find_row(const std::string& label) {
  state_->read_labels();
  const auto it = state_->rows_by_label.find(label);
  if (it == state_->rows_by_label.end()) return std::nullopt;
  return it->second;
}

std::vector<std::int64_t> ExploreSource::rows_named(const std::string& name, std::size_t limit) {
  State& s = *state_;
  s.read_labels();
  std::vector<std::int64_t> found;
  const std::string tail = "/" + name;
  for (std::size_t row = 0; row < s.labels.size() && found.size() < limit && !name.empty(); ++row) {
    const std::string& l = s.labels[row];
    if (l == name ||
        (l.size() > tail.size() && l.compare(l.size() - tail.size(), tail.size(), tail) == 0))
      found.push_back(static_cast<std::int64_t>(row));
  }
  return found;
}

std::string ExploreSource::label(std::int64_t row) {
  state_->read_labels();
  return state_->labels.at(static_cast<std::size_t>(row));
}

const std::string& ExploreSource::png(std::int64_t row) {
  State& s = *state_;
  const auto kept = s.pictures.find(row);
  if (kept != s.pictures.end()) return kept->second;
  if (s.pictures.size() >= kKeptPictures) s.pictures.clear();
  return s.pictures.emplace(row, png_of(s.searcher->picture(row))).first->second;
}

std::string ExploreSource::file_png(const fs::path& file) {
  return png_of(file_picture(state_->searcher->model(), file));
}

}  // namespace wscsl::host::search
