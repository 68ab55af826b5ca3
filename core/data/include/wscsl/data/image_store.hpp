// The decoded images of an image list, on disk: decoded and resized once into a store file (see
// store_file.hpp) under the cache folder, then memory-mapped by every process of a run and by later
// runs, so that private memory does not grow with the dataset. One store per (image folder, file
// list, image size, decoding options); it is built again when a source file's size or time
// changes. Of two processes that need the same store, one builds it and the other waits for it
// (an flock on "<store>.lock").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/data/store_file.hpp"

namespace wscsl {

// One image of a dataset: its file, relative to the image folder, and the index-file line that
// lists it (for messages).
struct ImageEntry {
  std::string file;
  std::int64_t line = 0;
  // The file that lists it, for a list read from several files; empty for ImageList::index.
  std::filesystem::path listed_in = {};
};

// A dataset's images; the index in `entries` is the image id.
struct ImageList {
  std::filesystem::path folder;  // canonical image folder: no listed file may leave it
  std::filesystem::path index;   // the file that lists them (the first, when several do)
  std::vector<ImageEntry> entries;

  // The file that lists image `id`: its entry's `listed_in`, else `index`.
  const std::filesystem::path& listing(std::size_t id) const;
};

// Where stores live: `cache_dir` when it is not empty, else $XDG_CACHE_HOME/wscsl, else
// $HOME/.cache/wscsl.
std::filesystem::path image_cache_dir(const std::string& cache_dir);

struct ImageStoreOptions {
  std::int64_t image_size = 112;
  std::int64_t max_image_pixels = 0;
  std::int64_t decode_threads = 0;  // 0: every hardware thread
  std::filesystem::path cache_dir;
  std::int64_t limit_bytes = 0;  // largest store this dataset may write
};

// The file of the store of `images` with `options` (its name is a digest of what it holds).
std::filesystem::path image_store_path(const ImageList& images, const ImageStoreOptions& options);

// The stores in `dir` (files named "*.images"), in name order.
std::vector<std::filesystem::path> image_stores(const std::filesystem::path& dir);

// Removes the store `path`, its lock file and what killed builders left. Throws DataError when
// `path` is not named as a store, or while a process builds it. Processes that have it open keep
// reading it; later runs build it again.
void remove_image_store(const std::filesystem::path& path);

class ImageStore {
 public:
  // Maps the store of `images`, building it first when there is none or a source file changed
  // since it was built (waiting instead while another process builds it). Throws DataError with
  // one sentence naming the file: a store over options.limit_bytes, a folder that cannot be
  // written, a full disk, a damaged store.
  ImageStore(const ImageList& images, const ImageStoreOptions& options);
  ~ImageStore();

  const std::filesystem::path& path() const;
  std::int64_t image_bytes() const;
  // Images this process decoded: 0 when the store was there already.
  std::int64_t decoded_images() const { return decoded_; }
  // Why image `id` could not be decoded; empty when it is usable.
  const std::string& problem(std::int64_t id) const;

  // uint8 [B, C, H, W] copies of the images `ids` (each checked against its checksum).
  at::Tensor gather(const std::vector<std::int64_t>& ids) const;

 private:
  std::unique_ptr<MappedStore> store_;
  std::int64_t decoded_ = 0;
};

}  // namespace wscsl
