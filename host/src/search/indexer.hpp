// `wscsl index`: every image of a folder, a list file or a dataset split embedded once through a
// trained run and written to an index directory (index_format.hpp), chunk by chunk, so that an
// interrupted index continues where it stopped and a later call adds new images.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "hnsw_graphs.hpp"
#include "pipeline/session.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl::host::search {

enum class ImageSource { Folder, ListFile, Split };

// What happens to files of a folder or list that are not usable images (not a JPEG or PNG,
// damaged, too many pixels, unreadable).
enum class UnreadableFiles {
  Skip,    // skipped, each named on the terminal and in manifest.json's "skipped"
  Refuse,  // the index is refused, naming them, and nothing is written
};

struct IndexRequest {
  std::filesystem::path run;
  std::filesystem::path out;
  ImageSource source = ImageSource::Folder;
  std::filesystem::path images;  // the folder (searched recursively) or the list file
  Split split = Split::Test;     // ImageSource::Split
  std::int64_t chunk_rows = 1024;
  UnreadableFiles unreadable = UnreadableFiles::Skip;
  // Also build the approximate index (HNSW graphs); an index that has one gets it rebuilt
  // whenever images are added.
  bool approximate = false;
  // Make the index at `out` again, of the images it holds (of any format), in this wscsl's format
  // and with the weights of `run`; `source` and `images` are not used. The new index is written
  // beside it and takes its place once whole, with HNSW graphs where the old one had them.
  bool rebuild = false;
  HnswSettings hnsw;
  std::FILE* progress = stdout;
};

struct IndexSummary {
  std::int64_t added = 0;    // images embedded by this call
  std::int64_t rows = 0;     // images in the index now
  std::int64_t skipped = 0;  // unusable files met by this call
};

// Throws DataError with one sentence naming the file for bad input (an empty folder, a list that
// names nothing, an index of another run, of another format or damaged, unusable files under
// Refuse); the index directory is then neither created nor changed.
IndexSummary build_index(const GlobalOptions& global, const IndexRequest& request);

}  // namespace wscsl::host::search
