#include "search_command.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluation/evaluation.hpp"
#include "search/dataset_attributes.hpp"
#include "wscsl/plot/neighbour_grid.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

SearchCommand::SearchCommand(CLI::App& app)
    : Command(app, "search",
              "The nearest images of an index to a query under each condition, ranked by the "
              "run's condition module") {
  CLI::App& c = subcommand();
  c.add_option("index", index_,
               "Index directory (from `wscsl index`), or a run directory with RUN/index")
      ->required();
  auto* query = c.add_option("--query", query_, "Query image file (JPEG or PNG)");
  auto* item = c.add_option("--item", item_, "Query by a row of the index");
  query->excludes(item);
  c.add_option("--condition", conditions_,
               "Condition to rank by (repeatable; 'all' or none: every condition)");
  c.add_option("-k", options_.k, "Neighbours per condition")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  c.add_option("--pool", options_.pool,
               "Candidates per condition the module ranks (drawn by the embeddings)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000));
  c.add_flag("--approximate", approximate_,
             "Draw the candidates from the index's HNSW graphs instead of every row");
  c.add_option("--ef", options_.hnsw_ef, "HNSW search list (default: the pool)")
      ->check(CLI::Range(1, 100000000));
  c.add_flag("--measure-recall", options_.measure_recall,
             "Also rank every row by the module and report the recall@k of the result");
  c.add_option("--block", options_.block_rows, "Rows of one block product")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000));
  c.add_option("--run", run_, "The run (default: the one the index names)");
  c.add_flag("--json", json_, "One JSON line per condition instead of a table");
  c.add_option("--picture", picture_,
               "Also draw the query and its neighbours per condition into this PNG");
}

namespace {

std::string comparison_text(const search::IndexedCondition& c) {
  const std::string by = c.embedding < 0 ? "every psi" : fmt::format("psi{}", c.embedding + 1);
  return c.comparison == search::Comparison::Distances ? "module distances of " + by
                                                       : "module pair scores, candidates by " + by;
}

}  // namespace

int SearchCommand::run(const Invocation& invocation) {
  if (query_.empty() && item_ < 0)
    throw UsageError("search needs a query: --query IMAGE or --item ROW");
  search::SearchOptions options = options_;
  if (approximate_) options.candidates = search::CandidateSearch::Approximate;
  for (const std::string& c : conditions_)
    if (c != "all") options.conditions.push_back(c);
  const search::SearchTarget target = search::search_target(index_, run_);
  search::IndexSearcher searcher(invocation.global, target.index, target.run);
  const bool by_item = query_.empty();
  const ItemFeatures query =
      by_item ? searcher.item(item_) : searcher.embed_query(query_, query_.string());
  const std::vector<search::ConditionNeighbours> results =
      searcher.search(query, options, by_item ? item_ : -1);
  // Rows named by their files and, where the dataset knows them, their attributes.
  search::RowNames names(searcher);
  std::string query_label = query_.string();
  if (by_item) {
    const std::string label = names.label(item_);
    const std::string attributes = names.attribute_text(names.attributes(label));
    query_label =
        fmt::format("row {} ({}{})", item_, label, attributes.empty() ? "" : ", " + attributes);
  }
  if (json_) {
    for (const search::ConditionNeighbours& r : results) {
      nlohmann::ordered_json line = {{"query", query_label}, {"condition", r.condition}};
      nlohmann::ordered_json neighbours = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < r.neighbours.size(); ++i) {
        const std::string label = names.label(r.neighbours[i].row);
        neighbours.push_back({{"rank", i + 1},
                              {"row", r.neighbours[i].row},
                              {"image", label},
                              {"attributes", names.attributes_json(names.attributes(label))},
                              {"distance", r.neighbours[i].distance}});
      }
      line["neighbours"] = neighbours;
      if (!std::isnan(r.recall)) line[fmt::format("recall@{}", options.k)] = r.recall;
      line["candidate_ms"] = r.candidate_ms;
      line["ranking_ms"] = r.ranking_ms;
      fmt::print("{}\n", line.dump());
    }
  } else {
    std::vector<ReportTable> tables;
    for (const search::ConditionNeighbours& r : results) {
      ReportTable t;
      t.title = fmt::format(
          "{} ({}){}", r.condition, comparison_text(searcher.condition(r.condition)),
          std::isnan(r.recall) ? "" : fmt::format(" — recall@{} {:.3f}", options.k, r.recall));
      t.header = {"rank", "distance", "row", "image"};
      if (names.any_attributes()) t.header.push_back("attributes");
      for (std::size_t i = 0; i < r.neighbours.size(); ++i) {
        const std::string label = names.label(r.neighbours[i].row);
        t.rows.push_back({std::to_string(i + 1), fmt::format("{:.6g}", r.neighbours[i].distance),
                          std::to_string(r.neighbours[i].row), label});
        if (names.any_attributes())
          t.rows.back().push_back(names.attribute_text(names.attributes(label)));
      }
      tables.push_back(std::move(t));
    }
    fmt::print("query {}, {} images in {}\n{}", query_label, searcher.rows(),
               searcher.index().string(), format_text(tables));
  }
  if (!picture_.empty()) {
    const torch::Tensor query_picture =
        by_item ? searcher.picture(item_) : search::file_picture(searcher.model(), query_);
    std::vector<plot::NeighbourBlock> blocks;
    for (const search::ConditionNeighbours& r : results) {
      plot::NeighbourRow row;
      row.query = query_picture;
      for (const search::Neighbour& n : r.neighbours) {
        row.neighbours.push_back(searcher.picture(n.row));
        row.frames.push_back(plot::kGray);
      }
      blocks.push_back({r.condition, {row}});
    }
    plot::neighbour_grid(
        fmt::format("Top-{} of {} (query left)", options.k, searcher.index().filename().string()),
        blocks, static_cast<int>(options.k), 64)
        .save_png(picture_);
    if (!json_) fmt::print("wrote {}\n", picture_.string());
  }
  return 0;
}

}  // namespace wscsl::host
