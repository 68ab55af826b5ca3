// Images added to an index directory (index_format.hpp) for `wscsl index`: a split's images or a
// set of files, embedded through the run and written chunk by chunk, each chunk committed by
// rewriting the manifest; unusable files found before anything is written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "index_format.hpp"
#include "indexer.hpp"
#include "run_model.hpp"

namespace wscsl::host::search {

// One call's additions to an index: the run, the manifest as it grows (made on the first images
// added, so that a refusal writes nothing), and the labels it holds.
struct Indexing {
  const IndexRequest& request;
  std::filesystem::path out;  // where the chunks are written
  RunModel& model;
  IndexManifest manifest;
  bool has_manifest = false;
  std::set<std::string> indexed;
  IndexSummary summary;

  // The manifest before the first chunk, with `input` among its inputs.
  void record(const std::string& input);
};

// The images of `split` not in the index yet (of the ids `only`, where given), in the split's
// order; `input` is recorded when any is added.
void add_split(Indexing& ix, Split split, const std::set<std::int64_t>* only,
               const std::string& input);

// The files of `files` not in the index yet; `source` names where they came from in messages,
// `input` is recorded when any is added. Unusable files are skipped and listed, or refused
// (request.unreadable, and always when none is usable) before anything is written.
void add_files(Indexing& ix, const std::vector<std::filesystem::path>& files,
               const std::string& source, const std::string& input);

}  // namespace wscsl::host::search
