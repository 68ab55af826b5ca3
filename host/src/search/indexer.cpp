#include "indexer.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "evaluation/evaluation.hpp"
#include "index_format.hpp"
#include "index_writer.hpp"
#include "run_model.hpp"
#include "wscsl/data/image_dataset.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

// Every file under `folder` (recursively, hidden ones left out), absolute, in path order.
std::vector<fs::path> folder_files(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw DataError(
        fmt::format("{}: not a folder; --images names a folder of images", folder.string()));
  std::vector<fs::path> files;
  const fs::path root = fs::canonical(folder);
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory()) files.push_back(it->path());
  }
  if (ec) throw DataError(fmt::format("{}: cannot list it ({})", folder.string(), ec.message()));
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw DataError(
        fmt::format("{}: the folder holds no files; nothing to index", folder.string()));
  return files;
}

// The files a list file names, one a line (relative to the list's folder, or absolute); blank
// lines are ignored.
std::vector<fs::path> listed_files(const fs::path& list) {
  std::istringstream in(read_text_file(list));
  const fs::path base = fs::absolute(list).parent_path();
  std::vector<fs::path> files;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    files.push_back(fs::weakly_canonical(base / line));
  }
  if (files.empty())
    throw DataError(fmt::format("{}: the list names no files; nothing to index", list.string()));
  return files;
}

std::set<std::string> indexed_labels(const fs::path& index, const IndexManifest& manifest) {
  std::set<std::string> labels;
  for (std::size_t c = 0; c < manifest.chunks.size(); ++c)
    for (const IndexedImage& image : read_chunk_images(index, c, manifest.chunks[c]))
      labels.insert(image.label());
  return labels;
}

IndexSummary add_images(const GlobalOptions& global, const IndexRequest& request) {
  std::unique_ptr<RunModel> model = open_run_model(global, request.run);
  Indexing ix{request, request.out, *model, {}, false, {}, {}};
  // An index already there is extended, and only by the run it was made from.
  if (fs::exists(manifest_path(request.out))) {
    ix.manifest = read_manifest(request.out);
    ix.has_manifest = true;
    require_same_run(ix.manifest, *model, request.out);
    ix.indexed = indexed_labels(request.out, ix.manifest);
    // Files skipped by an earlier call stay listed there and are not tried again.
    for (const SkippedFile& s : ix.manifest.skipped)
      ix.indexed.insert(s.file);
  } else if (fs::exists(request.out) && !fs::is_empty(request.out)) {
    throw DataError(
        fmt::format("{}: the folder exists and holds no index (no manifest.json); "
                    "give --out a new or empty folder",
                    request.out.string()));
  }
  switch (request.source) {
    case ImageSource::Split:
      add_split(ix, request.split, nullptr, fmt::format("--split {}", split_name(request.split)));
      break;
    case ImageSource::Folder:
      add_files(ix, folder_files(request.images), request.images.string(),
                "--images " + fs::absolute(request.images).lexically_normal().string());
      break;
    case ImageSource::ListFile:
      add_files(ix, listed_files(request.images), request.images.string(),
                "--list " + fs::absolute(request.images).lexically_normal().string());
      break;
  }
  ix.summary.rows = ix.manifest.rows();
  return ix.summary;
}

// The index made again, of the images it holds, in a folder beside it that then takes its place:
// an interrupted or refused rebuild leaves the index as it was.
IndexSummary rebuild(const GlobalOptions& global, const IndexRequest& request) {
  const HeldImages held = read_held_images(request.out);
  std::unique_ptr<RunModel> model = open_run_model(global, request.run);
  fs::path index = fs::absolute(request.out).lexically_normal();
  if (!index.has_filename()) index = index.parent_path();  // "shoes.index/"
  const fs::path fresh = index.string() + ".rebuilding";
  fs::remove_all(fresh);  // what an interrupted rebuild left
  Indexing ix{request, fresh, *model, {}, false, {}, {}};
  try {
    // Runs of consecutive files, and of consecutive images of one split, in the index's order.
    for (std::size_t begin = 0; begin < held.images.size();) {
      const IndexedImage& first = held.images[begin];
      std::size_t end = begin;
      while (end < held.images.size() && held.images[end].split == first.split &&
             held.images[end].file.empty() == first.file.empty())
        ++end;
      const std::string input = fmt::format("--rebuild of an index of format {}", held.format);
      if (first.file.empty()) {
        Split split{};
        if (!parse_split(first.split, split))
          throw DataError(fmt::format("{}: an image of the split '{}', which wscsl does not know",
                                      request.out.string(), first.split));
        std::set<std::int64_t> ids;
        for (std::size_t i = begin; i < end; ++i)
          ids.insert(held.images[i].id);
        const std::int64_t before = ix.summary.added;
        add_split(ix, split, &ids, input);
        const auto missing = static_cast<std::int64_t>(ids.size()) - (ix.summary.added - before);
        if (missing > 0)
          fmt::print(stderr,
                     "wscsl: warning: {} of the images of split '{}' that {} held are not in "
                     "that split of {} now; left out\n",
                     missing, first.split, request.out.string(), request.run.string());
      } else {
        std::vector<fs::path> files;
        for (std::size_t i = begin; i < end; ++i)
          files.emplace_back(held.images[i].file);
        add_files(ix, files, fmt::format("{} (the files it holds)", request.out.string()), input);
      }
      begin = end;
    }
    if (!ix.has_manifest)
      throw DataError(
          fmt::format("{}: none of the images it holds is usable now; it is left as it "
                      "was",
                      request.out.string()));
    // The inputs that made the images, where the index recorded them.
    if (!held.inputs.empty()) {
      ix.manifest.inputs = held.inputs;
      write_manifest(fresh, ix.manifest);
    }
    if (request.approximate || fs::exists(request.out / "hnsw.json"))
      HnswGraphs::build(fresh, ix.manifest, request.hnsw, request.progress);
  } catch (...) {
    fs::remove_all(fresh);
    throw;
  }
  const fs::path old = index.string() + ".replaced";
  fs::remove_all(old);
  fs::rename(index, old);
  try {
    fs::rename(fresh, index);
  } catch (...) {
    fs::rename(old, index);
    throw;
  }
  fs::remove_all(old);
  ix.summary.rows = ix.manifest.rows();
  return ix.summary;
}

}  // namespace

IndexSummary build_index(const GlobalOptions& global, const IndexRequest& request) {
  if (request.chunk_rows < 1) throw Error("--chunk must be at least 1");
  if (request.rebuild) return rebuild(global, request);
  const IndexSummary summary = add_images(global, request);
  const bool has_graphs = fs::exists(request.out / "hnsw.json");
  if (request.approximate || (has_graphs && summary.added > 0))
    HnswGraphs::build(request.out, read_manifest(request.out), request.hnsw, request.progress);
  return summary;
}

}  // namespace wscsl::host::search
