// What `wscsl explore` shows of one index and its run, as JSON: the run's conditions, alignment,
// results and curves; pages of the index's images, each named by its file and with the dataset's
// attributes where the dataset knows them (an image of an index made with `--split` too); the
// neighbours of a row or of an image file under chosen conditions through IndexSearcher, the code
// path of `wscsl search`, with the module's attention map over the query for each condition where
// it has them; and each image as a PNG. The header stays free of LibTorch so
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

  // The run's summary (run_summary): its module, alignment, results and curves.
  nlohmann::json summary() const;
  // {total, matches, offset, items: [{row, label, attributes}]}: the rows whose label or
  // attribute values contain every word of `filter` (case-insensitive; "name=value" too).
  nlohmann::json gallery(std::int64_t offset, std::int64_t limit, const std::string& filter);
  // {query: {row, label, attributes}, conditions: [{condition, labelled, attention, neighbours:
  // [{row, label, distance, same}]}], server_ms}: a column for each of `conditions` the index
  // has, in their order (none for those it lacks: a compared index may have others). `same` is
  // whether the neighbour shares the query's value of that dataset condition, null where either
  // is unknown. `attention` is where the module looks in the query for that condition, the map of
  // the embedding the condition ranks by (ConditionModule::attention_maps): {height, width,
  // weights: height·width values row by row, summing to 1}; null for a module without attention
  // maps and for a condition of every embedding. Throws Error naming a row out of range.
  nlohmann::json neighbours_of_row(std::int64_t row, std::int64_t k,
                                   const std::vector<std::string>& conditions);
  // The same for an image file (`shown` names it in the answer); throws DataError for a file
  // that is not a usable image.
  nlohmann::json neighbours_of_file(const std::filesystem::path& file, const std::string& shown,
                                    std::int64_t k, const std::vector<std::string>& conditions);
  // The row holding the image named `label` (a row's label(), or what the index calls it: a
  // file, or "<split>/<id>"), if any.
  std::optional<std::int64_t> find_row(const std::string& label);
  // The rows whose label is `name` or ends with "/" + `name` (a file's name, or the end of its
  // path), in row order, at most `limit` of them.
  std::vector<std::int64_t> rows_named(const std::string& name, std::size_t limit);
  // What the page calls a row: its file (an image of a split: the file the dataset gives it, where
  // the dataset names its files), else "<split>/<id>".
  std::string label(std::int64_t row);
  // The image of a row as the model sees it, as PNG bytes (kept once made).
  const std::string& png(std::int64_t row);
  // An image file as the model sees it, as PNG bytes; throws DataError for a file that is not a
  // usable image.
  std::string file_png(const std::filesystem::path& file);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace wscsl::host::search
