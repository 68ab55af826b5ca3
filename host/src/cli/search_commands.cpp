#include "search_commands.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluation/evaluation.hpp"
#include "search/dataset_attributes.hpp"
#include "wscsl/error.hpp"
#include "wscsl/plot/neighbour_grid.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

SearchCommands::SearchCommands(CLI::App& app) {
  index_ = app.add_subcommand(
      "index",
      "Embed a folder of images (or a list, or a dataset split) once through a trained run "
      "into an index that `wscsl search` searches");
  index_->add_option("run", index_request_.run, "Run directory (its best checkpoint is used)")
      ->required();
  auto* images = index_->add_option("--images", images_,
                                    "Folder of JPEG and PNG images (searched recursively)");
  auto* list =
      index_->add_option("--list", list_, "File naming one image a line (relative to its folder)");
  std::vector<std::string> split_names;
  for (Split split : kAllSplits)
    split_names.emplace_back(split_name(split));
  auto* split = index_->add_option("--split", split_, "A split of the run's dataset")
                    ->check(CLI::IsMember(split_names));
  images->excludes(list)->excludes(split);
  list->excludes(split);
  index_->add_option("--out", index_request_.out, "Index directory (default: <run>/index)");
  index_
      ->add_option("--chunk", index_request_.chunk_rows, "Images embedded and committed at a time")
      ->capture_default_str();
  index_->add_flag("--strict", strict_,
                   "Refuse the folder when any file is not a usable image (default: skip and list "
                   "them)");
  index_->add_flag("--approximate", approximate_,
                   "Also build the approximate index (HNSW graphs) for large collections");
  auto* rebuild = index_->add_flag(
      "--rebuild", rebuild_,
      "Make the index at --out again in place, of the images it holds, in this wscsl's format "
      "(an index of an earlier format is refused naming this)");
  rebuild->excludes(images)->excludes(list)->excludes(split);
  index_->add_option("--hnsw-m", index_request_.hnsw.m, "Links per node of the HNSW graphs")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  index_
      ->add_option("--hnsw-ef-construction", index_request_.hnsw.ef_construction,
                   "Candidate list while building the HNSW graphs")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));

  search_ = app.add_subcommand(
      "search",
      "The nearest images of an index to a query under each condition, ranked by the "
      "run's condition module");
  SearchArgs& s = search_args_;
  search_
      ->add_option("index", s.index,
                   "Index directory (from `wscsl index`), or a run directory with RUN/index")
      ->required();
  auto* query = search_->add_option("--query", s.query, "Query image file (JPEG or PNG)");
  auto* item = search_->add_option("--item", s.item, "Query by a row of the index");
  query->excludes(item);
  search_->add_option("--condition", s.conditions,
                      "Condition to rank by (repeatable; 'all' or none: every condition)");
  search_->add_option("-k", s.options.k, "Neighbours per condition")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  search_
      ->add_option("--pool", s.options.pool,
                   "Candidates per condition the module ranks (drawn by the embeddings)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000));
  search_->add_flag("--approximate", approximate_,
                    "Draw the candidates from the index's HNSW graphs instead of every row");
  search_->add_option("--ef", s.options.hnsw_ef, "HNSW search list (default: the pool)")
      ->check(CLI::Range(1, 100000000));
  search_->add_flag("--measure-recall", s.options.measure_recall,
                    "Also rank every row by the module and report the recall@k of the result");
  search_->add_option("--block", s.options.block_rows, "Rows of one block product")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000));
  search_->add_option("--run", s.run, "The run (default: the one the index names)");
  search_->add_flag("--json", s.json, "One JSON line per condition instead of a table");
  search_->add_option("--picture", s.picture,
                      "Also draw the query and its neighbours per condition into this PNG");
}

bool SearchCommands::parsed() const {
  return index_->parsed() || search_->parsed();
}

int SearchCommands::run(const GlobalOptions& global) {
  if (index_->parsed()) {
    search::IndexRequest request = index_request_;
    if (rebuild_) {
      request.rebuild = true;
    } else if (!images_.empty()) {
      request.source = search::ImageSource::Folder;
      request.images = images_;
    } else if (!list_.empty()) {
      request.source = search::ImageSource::ListFile;
      request.images = list_;
    } else if (!split_.empty()) {
      request.source = search::ImageSource::Split;
      parse_split(split_, request.split);
    } else if (approximate_) {
      // The HNSW graphs of the images the index holds, without adding any.
      if (request.out.empty()) request.out = request.run / "index";
      search::HnswGraphs::build(request.out, search::read_manifest(request.out), request.hnsw,
                                stdout);
      return 0;
    } else {
      fmt::print(stderr,
                 "wscsl: error: index needs the images: --images DIR, --list FILE or --split "
                 "NAME (or --approximate alone, to build an index's HNSW graphs; --rebuild, to "
                 "make an index again of the images it holds)\n");
      return 2;
    }
    if (request.out.empty()) request.out = request.run / "index";
    request.unreadable = strict_ ? search::UnreadableFiles::Refuse : search::UnreadableFiles::Skip;
    request.approximate = approximate_;
    return run_index(global, request);
  }
  SearchArgs args = search_args_;
  if (args.query.empty() && args.item < 0) {
    fmt::print(stderr, "wscsl: error: search needs a query: --query IMAGE or --item ROW\n");
    return 2;
  }
  if (approximate_) args.options.candidates = search::CandidateSearch::Approximate;
  for (const std::string& c : args.conditions)
    if (c != "all") args.options.conditions.push_back(c);
  return run_search(global, args);
}

int run_index(const GlobalOptions& global, const search::IndexRequest& request) {
  const search::IndexSummary s = search::build_index(global, request);
  if (request.rebuild) {
    fmt::print("{}: made again, {} images{}\n", request.out.string(), s.rows,
               s.skipped ? fmt::format(" ({} files skipped)", s.skipped) : "");
    return 0;
  }
  fmt::print("{}: {} images ({} added{})\n", request.out.string(), s.rows, s.added,
             s.skipped ? fmt::format(", {} files skipped", s.skipped) : "");
  return 0;
}

namespace {

std::string comparison_text(const search::IndexedCondition& c) {
  const std::string by = c.embedding < 0 ? "every psi" : fmt::format("psi{}", c.embedding + 1);
  return c.comparison == search::Comparison::Distances ? "module distances of " + by
                                                       : "module pair scores, candidates by " + by;
}

}  // namespace

int run_search(const GlobalOptions& global, const SearchArgs& args) {
  const search::SearchTarget target = search::search_target(args.index, args.run);
  search::IndexSearcher searcher(global, target.index, target.run);
  const bool by_item = args.query.empty();
  const ItemFeatures query =
      by_item ? searcher.item(args.item) : searcher.embed_query(args.query, args.query.string());
  const std::vector<search::ConditionNeighbours> results =
      searcher.search(query, args.options, by_item ? args.item : -1);
  // Rows named by their files and, where the dataset knows them, their attributes.
  search::RowNames names(searcher);
  std::string query_label = args.query.string();
  if (by_item) {
    const std::string label = names.label(args.item);
    const std::string attributes = names.attribute_text(names.attributes(label));
    query_label =
        fmt::format("row {} ({}{})", args.item, label, attributes.empty() ? "" : ", " + attributes);
  }
  if (args.json) {
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
      if (!std::isnan(r.recall)) line[fmt::format("recall@{}", args.options.k)] = r.recall;
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
          std::isnan(r.recall) ? "" : fmt::format(" — recall@{} {:.3f}", args.options.k, r.recall));
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
  if (!args.picture.empty()) {
    const torch::Tensor query_picture =
        by_item ? searcher.picture(args.item) : search::file_picture(searcher.model(), args.query);
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
    plot::neighbour_grid(fmt::format("Top-{} of {} (query left)", args.options.k,
                                     searcher.index().filename().string()),
                         blocks, static_cast<int>(args.options.k), 64)
        .save_png(args.picture);
    if (!args.json) fmt::print("wrote {}\n", args.picture.string());
  }
  return 0;
}

}  // namespace wscsl::host
