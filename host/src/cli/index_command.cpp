#include "index_command.hpp"

#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "search/hnsw_graphs.hpp"
#include "search/index_format.hpp"

namespace wscsl::host {

IndexCommand::IndexCommand(CLI::App& app)
    : Command(app, "index",
              "Embed a folder of images (or a list, or a dataset split) once through a trained "
              "run into an index that `wscsl search` searches") {
  CLI::App& c = subcommand();
  c.add_option("run", request_.run, "Run directory (its best checkpoint is used)")->required();
  auto* images =
      c.add_option("--images", images_, "Folder of JPEG and PNG images (searched recursively)");
  auto* list =
      c.add_option("--list", list_, "File naming one image a line (relative to its folder)");
  std::vector<std::string> split_names;
  for (Split split : kAllSplits)
    split_names.emplace_back(split_name(split));
  auto* split = c.add_option("--split", split_, "A split of the run's dataset")
                    ->check(CLI::IsMember(split_names));
  images->excludes(list)->excludes(split);
  list->excludes(split);
  c.add_option("--out", request_.out, "Index directory (default: <run>/index)");
  c.add_option("--chunk", request_.chunk_rows, "Images embedded and committed at a time")
      ->capture_default_str();
  c.add_flag("--strict", strict_,
             "Refuse the folder when any file is not a usable image (default: skip and list "
             "them)");
  c.add_flag("--approximate", approximate_,
             "Also build the approximate index (HNSW graphs) for large collections");
  auto* rebuild = c.add_flag(
      "--rebuild", rebuild_,
      "Make the index at --out again in place, of the images it holds, in this wscsl's format "
      "(an index of an earlier format is refused naming this)");
  rebuild->excludes(images)->excludes(list)->excludes(split);
  c.add_option("--hnsw-m", request_.hnsw.m, "Links per node of the HNSW graphs")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  c.add_option("--hnsw-ef-construction", request_.hnsw.ef_construction,
               "Candidate list while building the HNSW graphs")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
}

int IndexCommand::run(const Invocation& invocation) {
  search::IndexRequest request = request_;
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
    throw UsageError(
        "index needs the images: --images DIR, --list FILE or --split NAME (or --approximate "
        "alone, to build an index's HNSW graphs; --rebuild, to make an index again of the images "
        "it holds)");
  }
  if (request.out.empty()) request.out = request.run / "index";
  request.unreadable = strict_ ? search::UnreadableFiles::Refuse : search::UnreadableFiles::Skip;
  request.approximate = approximate_;
  const search::IndexSummary s = search::build_index(invocation.global, request);
  if (request.rebuild) {
    fmt::print("{}: made again, {} images{}\n", request.out.string(), s.rows,
               s.skipped ? fmt::format(" ({} files skipped)", s.skipped) : "");
    return 0;
  }
  fmt::print("{}: {} images ({} added{})\n", request.out.string(), s.rows, s.added,
             s.skipped ? fmt::format(", {} files skipped", s.skipped) : "");
  return 0;
}

}  // namespace wscsl::host
