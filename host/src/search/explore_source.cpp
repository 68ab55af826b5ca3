#include "explore_source.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "dataset_attributes.hpp"
#include "run_summary.hpp"
#include "searcher.hpp"
#include "wscsl/error.hpp"
#include "wscsl/plot/canvas.hpp"
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

// A map [h, w] as the page draws it: {height, width, weights (row by row)}.
json attention_json(const torch::Tensor& map) {
  const torch::Tensor m = map.to(torch::kDouble).contiguous();
  json weights = json::array();
  const double* w = m.data_ptr<double>();
  for (std::int64_t i = 0; i < m.numel(); ++i)
    weights.push_back(w[i]);
  return {{"height", m.size(0)}, {"width", m.size(1)}, {"weights", weights}};
}

}  // namespace

struct ExploreSource::State {
  std::unique_ptr<IndexSearcher> searcher;
  std::unique_ptr<RowNames> names;
  std::vector<std::string> labels;  // of every row (ExploreSource::label), read on first use
  std::unordered_map<std::string, std::int64_t> rows_by_label;
  std::unordered_map<std::int64_t, std::string> pictures;

  void read_labels();
  const std::vector<std::string>* attributes_of(std::int64_t row) {
    read_labels();
    return names->attributes(labels[static_cast<std::size_t>(row)]);
  }
  // `maps`: the query's attention maps [K, h, w], undefined where the module has none.
  json neighbours(const ItemFeatures& query, const torch::Tensor& maps,
                  const std::vector<std::string>* query_values, std::int64_t k,
                  const std::vector<std::string>& conditions, std::int64_t exclude);
};

void ExploreSource::State::read_labels() {
  if (!labels.empty()) return;
  labels.reserve(static_cast<std::size_t>(searcher->rows()));
  for (std::int64_t row = 0; row < searcher->rows(); ++row) {
    labels.push_back(names->label(row));
    rows_by_label.emplace(labels.back(), row);
    rows_by_label.emplace(searcher->image(row).label(), row);
  }
}

json ExploreSource::State::neighbours(const ItemFeatures& query, const torch::Tensor& maps,
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
  const std::vector<std::string>& dataset_conditions = names->conditions();
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
    // The map of the embedding the condition ranks by; none for a condition of every ψ.
    const std::int64_t embedding = searcher->condition(c.condition).embedding;
    columns.push_back(
        {{"condition", c.condition},
         {"labelled", labelled},
         {"attention",
          maps.defined() && embedding >= 0 ? attention_json(maps[embedding]) : json(nullptr)},
         {"neighbours", list}});
  }
  const double ms = milliseconds_since(start);
  return {{"conditions", columns}, {"server_ms", ms}};
}

ExploreSource::ExploreSource(const GlobalOptions& global, const fs::path& target,
                             const fs::path& run, const std::string& run_option)
    : state_(std::make_unique<State>()) {
  const SearchTarget t = search_target(target, run);
  state_->searcher = std::make_unique<IndexSearcher>(global, t.index, t.run, run_option);
  state_->names = std::make_unique<RowNames>(*state_->searcher);
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
  return run_summary(*state_->searcher);
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
        text += fmt::format(" {}={}", lower(s.names->conditions()[f]), lower((*values)[f]));
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
                       {"attributes", s.names->attributes_json(s.attributes_of(row))}});
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
  // The row's image is read again only for a module that looks at regions of it.
  RunModel& model = s.searcher->model();
  const torch::Tensor maps =
      has_attention_maps(model) ? attention_maps(model, s.searcher->input(row)) : torch::Tensor();
  json out = s.neighbours(s.searcher->item(row), maps.defined() ? maps[0] : maps,
                          s.attributes_of(row), k, conditions, row);
  out["query"] = {{"row", row},
                  {"label", s.labels[static_cast<std::size_t>(row)]},
                  {"attributes", s.names->attributes_json(s.attributes_of(row))}};
  return out;
}

json ExploreSource::neighbours_of_file(const fs::path& file, const std::string& shown,
                                       std::int64_t k, const std::vector<std::string>& conditions) {
  State& s = *state_;
  s.read_labels();
  const std::vector<std::string>* values = s.names->attributes(fs::weakly_canonical(file).string());
  RunModel& model = s.searcher->model();
  const torch::Tensor pixels = read_query_pixels(model, file, shown);
  const torch::Tensor maps = attention_maps(model, model_input(model, pixels));
  json out = s.neighbours(embed_pixels(model, pixels), maps.defined() ? maps[0] : maps, values, k,
                          conditions, -1);
  out["query"] = {
      {"row", nullptr}, {"label", shown}, {"attributes", s.names->attributes_json(values)}};
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
