// What `wscsl explore` shows of one index and its run, as JSON: the run's conditions, alignment,
// results and curves; pages of the index's images with the dataset's attributes where it knows
// them; the neighbours of a row or of an image file under every condition through IndexSearcher,
// the code path of `wscsl search`; and each image as a PNG. The header stays free of LibTorch so
// that the server and the page's code compile without it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wscsl::host {
struct GlobalOptions;
}

namespace wscsl::host::search {

// An answer of the explorer as the browser reads it, and the rows whose pictures it shows (the
// query's, when it is a row, and every neighbour's), for whoever keeps those pictures.
struct ExploreAnswer {
  nlohmann::json body;
  std::vector<std::int64_t> rows;
};

class ExploreSource {
 public:
  // `target` is an index directory, or a run directory whose index is RUN/index (search_target);
  // `run` the run the command names for it (empty: none), `run_option` the option naming it.
  // Throws Error naming the target when it is neither, and whatever IndexSearcher throws for a
  // damaged index or a run that moved.
  ExploreSource(const GlobalOptions& global, const std::filesystem::path& target,
                const std::filesystem::path& run, const std::string& run_option);
  ~ExploreSource();

  const std::filesystem::path& index() const;
  const std::filesystem::path& run() const;
  std::int64_t rows() const;
  std::vector<std::string> conditions() const;

  // {name, index, run, rows, module, supervision, alignment: {source, conditions: [{condition,
  // embedding, comparison, accuracy}]}, results: [[metric, value]], curves: {epochs, series}}
  nlohmann::json summary() const;
  // {total, matches, offset, items: [{row, label, attributes}]}: the rows whose label or
  // attribute values contain every word of `filter` (case-insensitive; "name=value" too).
  nlohmann::json gallery(std::int64_t offset, std::int64_t limit, const std::string& filter);
  // {query, conditions: [{condition, labelled, neighbours: [{row, label, distance, same}]}],
  // server_ms}; `same` is whether the neighbour shares the query's value of that dataset
  // condition, null where either is unknown. Throws Error naming a row out of range.
  ExploreAnswer neighbours_of_row(std::int64_t row, std::int64_t k,
                                  const std::vector<std::string>& conditions);
  // The same for an image file (`shown` names it in the answer and in the DataError thrown for a
  // file that is not a usable image).
  ExploreAnswer neighbours_of_file(const std::filesystem::path& file, const std::string& shown,
                                   std::int64_t k, const std::vector<std::string>& conditions);
  // The row holding the image labelled `label`, if any.
  std::optional<std::int64_t> find_row(const std::string& label);
  std::string label(std::int64_t row);
  // The image of a row as the model sees it, as PNG bytes (kept once made).
  const std::string& png(std::int64_t row);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace wscsl::host::search
