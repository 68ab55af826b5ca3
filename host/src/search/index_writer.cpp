#include "index_writer.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "evaluation/evaluation.hpp"
#include "index_arrays.hpp"
#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/image_store.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

constexpr std::size_t kNamedProblems = 10;  // unusable files named in a refusal

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
std::int64_t write_chunks(Indexing& ix, const std::vector<IndexedImage>& images, Embed&& embed) {
  const IndexRequest& request = ix.request;
  const auto total = static_cast<std::int64_t>(images.size());
  fs::create_directories(ix.out / "chunks");
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t begin = 0; begin < total; begin += request.chunk_rows) {
    const std::int64_t end = std::min(total, begin + request.chunk_rows);
    const ItemFeatures items = embed(begin, end);
    const std::size_t chunk = ix.manifest.chunks.size();
    write_chunk_images(ix.out, chunk, {images.begin() + begin, images.begin() + end});
    write_chunk_arrays(ix.out, ix.manifest, chunk, items);
    ix.manifest.chunks.push_back(end - begin);
    write_manifest(ix.out, ix.manifest);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(request.progress, "indexed {}/{} images ({:.0f}%, {:.1f} images/s)\n", end, total,
               100.0 * static_cast<double>(end) / static_cast<double>(total),
               static_cast<double>(end) / std::max(seconds, 1e-9));
    std::fflush(request.progress);
  }
  return total;
}

}  // namespace

void Indexing::record(const std::string& input) {
  if (!has_manifest) manifest = new_manifest(model);
  has_manifest = true;
  if (std::find(manifest.inputs.begin(), manifest.inputs.end(), input) == manifest.inputs.end())
    manifest.inputs.push_back(input);
}

void add_split(Indexing& ix, Split split, const std::set<std::int64_t>* only,
               const std::string& input) {
  Pipeline& pipeline = ix.model.pipeline();
  const DatasetInfo info = pipeline.dataset->info();
  if (!info.has_split(split))
    throw DataError(
        fmt::format("{} has no split '{}'", pipeline.dataset->label(), split_name(split)));
  const EmbeddingTable table =
      embed_split(pipeline, split, pipeline.trainer.eval_batch_size, *ix.model.strategy);
  std::vector<IndexedImage> images;
  std::vector<std::int64_t> rows;
  const torch::Tensor ids = table.image_ids.contiguous();
  for (std::int64_t r = 0; r < ids.size(0); ++r) {
    IndexedImage image{"", std::string(split_name(split)), ids.data_ptr<std::int64_t>()[r]};
    if (ix.indexed.count(image.label()) || (only && !only->count(image.id))) continue;
    images.push_back(image);
    rows.push_back(r);
  }
  if (images.empty()) return;
  ix.record(input);
  const torch::Tensor row_tensor = torch::tensor(rows, torch::kLong);
  ix.summary.added += write_chunks(ix, images, [&](std::int64_t b, std::int64_t e) {
    return table.items.rows(row_tensor.slice(0, b, e));
  });
}

void add_files(Indexing& ix, const std::vector<fs::path>& files, const std::string& source,
               const std::string& input) {
  const IndexRequest& request = ix.request;
  RunModel& model = ix.model;
  require_file_preparation(model, source);
  std::vector<std::size_t> not_indexed;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (!ix.indexed.count(files[i].string())) not_indexed.push_back(i);
  if (not_indexed.empty()) {
    fmt::print(request.progress, "every image of {} is in {} already ({} images)\n", source,
               ix.out.string(), ix.manifest.rows());
    return;
  }
  // Decoded once into an image store, as a dataset's images are: damaged and oversized files are
  // found there, before anything is written to the index. The store holds every file listed, so
  // that a call continuing an interrupted one finds it built.
  ImageList list;
  list.folder = common_folder(files);
  list.index = source;
  for (const fs::path& f : files)
    list.entries.push_back({f.lexically_relative(list.folder).string(), 0});
  ImageStoreOptions store_options;
  store_options.image_size = model.images.size;
  store_options.max_image_pixels = model.images.max_image_pixels;
  store_options.cache_dir = image_cache_dir(model.images.cache_dir.string());
  store_options.limit_bytes = model.images.cache_limit_bytes;
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
        not_indexed.size(), source,
        unusable.size() == 1 ? "is not a usable image" : "are not usable images", join(named, "; "),
        unusable.size() > named.size()
            ? fmt::format("; and {} more", unusable.size() - named.size())
            : "",
        request.out.string(),
        usable.empty() ? "" : " (without --strict they are skipped and listed)"));
  }
  for (const SkippedFile& s : unusable)
    fmt::print(stderr, "wscsl: warning: skipped {}: {}\n", s.file, s.reason);

  ix.record(input);
  // Files skipped by an earlier call are among `indexed`, so none of these is listed yet.
  ix.manifest.skipped.insert(ix.manifest.skipped.end(), unusable.begin(), unusable.end());
  std::vector<IndexedImage> images;
  for (std::int64_t i : usable)
    images.push_back({files[static_cast<std::size_t>(i)].string(), "", -1});
  ix.summary.skipped += static_cast<std::int64_t>(unusable.size());
  ix.summary.added += write_chunks(ix, images, [&](std::int64_t b, std::int64_t e) {
    return embed_pixels(model, store.gather({usable.begin() + b, usable.begin() + e}));
  });
}

}  // namespace wscsl::host::search
