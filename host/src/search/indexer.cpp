#include "indexer.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "evaluation/evaluation.hpp"
#include "index_arrays.hpp"
#include "index_format.hpp"
#include "run_model.hpp"
#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/image_store.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

constexpr std::size_t kNamedProblems = 10;  // unusable files named in a refusal

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

// The deepest folder holding every file of `files`.
fs::path common_folder(const std::vector<fs::path>& files) {
  fs::path common = files.front().parent_path();
  for (const fs::path& f : files) {
    while (!common.empty() && common != common.root_path()) {
      const auto [end, _] = std::mismatch(common.begin(), common.end(), f.begin(), f.end());
      if (end == common.end()) break;
      common = common.parent_path();
    }
  }
  return common;
}

std::set<std::string> indexed_labels(const fs::path& index, const IndexManifest& manifest) {
  std::set<std::string> labels;
  for (std::size_t c = 0; c < manifest.chunks.size(); ++c)
    for (const IndexedImage& image : read_chunk_images(index, c, manifest.chunks[c]))
      labels.insert(image.label());
  return labels;
}

IndexManifest new_manifest(RunModel& model) {
  const Pipeline& pipeline = model.pipeline();
  const ConditionModule& module = *pipeline.condition_module;
  IndexManifest m;
  m.run = fs::absolute(model.run.root()).lexically_normal().string();
  m.checkpoint = fs::absolute(model.checkpoint).lexically_normal().string();
  m.checkpoint_sha256 = model.checkpoint_sha256;
  m.condition_module = module.label();
  m.supervision = module.supervision() == Supervision::Conditioned ? "conditioned" : "weak";
  m.conditions = indexed_conditions(model, m.alignment);
  m.phi_dim = pipeline.backbone->embedding_dim();
  m.embeddings = module.num_embeddings();
  m.psi_dim = module.output_dim();
  for (const NamedTextEncoder& t : pipeline.text_encoders)
    m.texts.push_back({t.name, t.encoder->output_dim()});
  return m;
}

// Writes the index chunk by chunk: `embed(begin, end)` gives the features of the new images
// [begin, end), each chunk is committed by rewriting the manifest.
template <class Embed>
std::int64_t write_chunks(const IndexRequest& request, IndexManifest& manifest,
                          const std::vector<IndexedImage>& images, Embed&& embed) {
  const auto total = static_cast<std::int64_t>(images.size());
  fs::create_directories(request.out / "chunks");
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t begin = 0; begin < total; begin += request.chunk_rows) {
    const std::int64_t end = std::min(total, begin + request.chunk_rows);
    const ItemFeatures items = embed(begin, end);
    const std::size_t chunk = manifest.chunks.size();
    write_chunk_images(request.out, chunk, {images.begin() + begin, images.begin() + end});
    write_chunk_arrays(request.out, manifest, chunk, items);
    manifest.chunks.push_back(end - begin);
    write_manifest(request.out, manifest);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(request.progress, "indexed {}/{} images ({:.0f}%, {:.1f} images/s)\n", end, total,
               100.0 * static_cast<double>(end) / static_cast<double>(total),
               static_cast<double>(end) / std::max(seconds, 1e-9));
    std::fflush(request.progress);
  }
  return total;
}

IndexSummary add_images(const GlobalOptions& global, const IndexRequest& request) {
  if (request.chunk_rows < 1) throw Error("--chunk must be at least 1");
  std::unique_ptr<RunModel> model = open_run_model(global, request.run);
  Pipeline& pipeline = model->pipeline();
  // An index already there is extended, and only by the run it was made from.
  const bool extending = fs::exists(manifest_path(request.out));
  IndexManifest manifest;
  std::set<std::string> indexed;
  if (extending) {
    manifest = read_manifest(request.out);
    require_same_run(manifest, *model, request.out);
    indexed = indexed_labels(request.out, manifest);
    // Files skipped by an earlier call stay listed there and are not tried again.
    for (const SkippedFile& s : manifest.skipped)
      indexed.insert(s.file);
  } else if (fs::exists(request.out) && !fs::is_empty(request.out)) {
    throw DataError(
        fmt::format("{}: the folder exists and holds no index (no manifest.json); "
                    "give --out a new or empty folder",
                    request.out.string()));
  }
  IndexSummary summary;

  if (request.source == ImageSource::Split) {
    const DatasetInfo info = pipeline.dataset->info();
    if (!info.has_split(request.split))
      throw DataError(fmt::format("{} has no split '{}'", pipeline.dataset->label(),
                                  split_name(request.split)));
    const EmbeddingTable table =
        embed_split(pipeline, request.split, pipeline.trainer.eval_batch_size);
    std::vector<IndexedImage> images;
    std::vector<std::int64_t> rows;
    const torch::Tensor ids = table.image_ids.contiguous();
    for (std::int64_t r = 0; r < ids.size(0); ++r) {
      IndexedImage image{"", std::string(split_name(request.split)),
                         ids.data_ptr<std::int64_t>()[r]};
      if (indexed.count(image.label())) continue;
      images.push_back(image);
      rows.push_back(r);
    }
    if (!extending) manifest = new_manifest(*model);
    const torch::Tensor row_tensor = torch::tensor(rows, torch::kLong);
    summary.added = write_chunks(request, manifest, images, [&](std::int64_t b, std::int64_t e) {
      return table.items.rows(row_tensor.slice(0, b, e));
    });
    summary.rows = manifest.rows();
    return summary;
  }

  const std::vector<fs::path> files = request.source == ImageSource::Folder
                                          ? folder_files(request.images)
                                          : listed_files(request.images);
  std::vector<std::size_t> not_indexed;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (!indexed.count(files[i].string())) not_indexed.push_back(i);
  if (not_indexed.empty()) {
    fmt::print(request.progress, "every image of {} is in {} already ({} images)\n",
               request.images.string(), request.out.string(), manifest.rows());
    summary.rows = manifest.rows();
    return summary;
  }
  // Decoded once into an image store, as a dataset's images are: damaged and oversized files are
  // found there, before anything is written to the index. The store holds every file listed, so
  // that a call continuing an interrupted one finds it built.
  ImageList list;
  list.folder = common_folder(files);
  list.index = request.images;
  for (const fs::path& f : files)
    list.entries.push_back({f.lexically_relative(list.folder).string(), 0});
  ImageStoreOptions store_options;
  store_options.image_size = model->pixels.image_size;
  store_options.max_image_pixels = model->pixels.max_image_pixels;
  store_options.cache_dir = image_cache_dir(model->pixels.cache_dir.string());
  store_options.limit_bytes = model->pixels.cache_limit_bytes;
  const ImageStore store(list, store_options);

  std::vector<std::int64_t> usable;
  std::vector<SkippedFile> unusable;
  for (std::size_t i : not_indexed) {
    const std::string& problem = store.problem(static_cast<std::int64_t>(i));
    if (problem.empty())
      usable.push_back(static_cast<std::int64_t>(i));
    else
      unusable.push_back({files[i].string(), problem});
  }
  if (!unusable.empty() && (request.unreadable == UnreadableFiles::Refuse || usable.empty())) {
    std::vector<std::string> named;
    for (std::size_t i = 0; i < std::min(kNamedProblems, unusable.size()); ++i)
      named.push_back(fmt::format("{} ({})", unusable[i].file, unusable[i].reason));
    throw DataError(fmt::format(
        "{} of the {} files of {} {}: {}{}; nothing was written to {}{}", unusable.size(),
        not_indexed.size(), request.images.string(),
        unusable.size() == 1 ? "is not a usable image" : "are not usable images", join(named, "; "),
        unusable.size() > named.size()
            ? fmt::format("; and {} more", unusable.size() - named.size())
            : "",
        request.out.string(),
        usable.empty() ? "" : " (without --strict they are skipped and listed)"));
  }
  for (const SkippedFile& s : unusable)
    fmt::print(stderr, "wscsl: warning: skipped {}: {}\n", s.file, s.reason);

  if (!extending) manifest = new_manifest(*model);
  // Files skipped by an earlier call are among `indexed`, so none of these is listed yet.
  manifest.skipped.insert(manifest.skipped.end(), unusable.begin(), unusable.end());
  std::vector<IndexedImage> images;
  for (std::int64_t i : usable)
    images.push_back({files[static_cast<std::size_t>(i)].string(), "", -1});
  summary.skipped = static_cast<std::int64_t>(unusable.size());
  summary.added = write_chunks(request, manifest, images, [&](std::int64_t b, std::int64_t e) {
    return embed_pixels(*model, store.gather({usable.begin() + b, usable.begin() + e}));
  });
  summary.rows = manifest.rows();
  return summary;
}

}  // namespace

IndexSummary build_index(const GlobalOptions& global, const IndexRequest& request) {
  const IndexSummary summary = add_images(global, request);
  const bool has_graphs = fs::exists(request.out / "hnsw.json");
  if (request.approximate || (has_graphs && summary.added > 0))
    HnswGraphs::build(request.out, read_manifest(request.out), request.hnsw, request.progress);
  return summary;
}

}  // namespace wscsl::host::search
