// The shared half of every dataset of image files (UT-Zappos-50k, Celeb-A, image folders): the
// reference image pipeline, decoding each image once into an on-disk store shared by every process
// (image_store.hpp), strict checks of every listed file, and skipping bad rows up to a limit. A
// concrete dataset only reads its index files: the image list and each split's triplets.
//
// Pipeline (CSN, SCE-Net and DiscoverNet, methods.md §1.2): decode as PIL's convert("RGB") →
// Resize(image_size) with PIL's antialiased bilinear → CenterCrop(image_size) → in training an
// independent horizontal flip per image with probability ½ → /255 → ImageNet normalisation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "wscsl/config/schema.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/image_store.hpp"
#include "wscsl/data/index_files.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl {

struct ImageDatasetOptions {
  std::int64_t image_size = 112;
  PixelNormalization normalize = PixelNormalization::ImageNet;
  bool flip = true;
  std::string cache_dir;
  std::int64_t cache_limit_mb = 65536;
  std::int64_t decode_threads = 0;
  std::int64_t max_bad_rows = 0;
  std::int64_t max_image_pixels = kDefaultMaxImagePixels;
};

// Declares the ImageDatasetOptions fields in the schema of an options struct derived from it.
template <class O>
void add_image_options(Schema<O>& s) {
  using B = ImageDatasetOptions;
  s.field("image_size", static_cast<std::int64_t O::*>(&B::image_size),
          "Shorter side after resizing (PIL bilinear, antialiased when downsampling), then the "
          "centre crop's side (torchvision's Resize + CenterCrop).")
      .min(1)
      .max(4096);
  s.field("normalize", static_cast<PixelNormalization O::*>(&B::normalize),
          "\"imagenet\": (x/255 − mean)/std with ImageNet's mean and std, as the reference "
          "loaders; \"none\": x/255 in [0, 1].",
          EnumChoices<PixelNormalization>{{PixelNormalization::ImageNet, "imagenet",
                                           "(x/255 − mean)/std with ImageNet's statistics"},
                                          {PixelNormalization::None, "none", "x/255 in [0, 1]"}});
  s.field("flip", static_cast<bool O::*>(&B::flip),
          "Flip each training image horizontally with probability ½, independently per image "
          "(drawn from the step's seed, the image's place in the batch and its id).");
  s.field("cache_dir", static_cast<std::string O::*>(&B::cache_dir),
          "Folder of the decoded-image stores (each image decoded and resized once, kept as uint8 "
          "on disk and shared by every process and later runs); empty: $XDG_CACHE_HOME/wscsl, "
          "else ~/.cache/wscsl.")
      .path();
  s.field("cache_limit_mb", static_cast<std::int64_t O::*>(&B::cache_limit_mb),
          "Largest decoded-image store in MiB this dataset may write to cache_dir (3 × "
          "image_size² bytes per image).")
      .min(1);
  s.field("decode_threads", static_cast<std::int64_t O::*>(&B::decode_threads),
          "Threads decoding images; 0 uses every hardware thread. The result does not depend on "
          "it.")
      .min(0);
  s.field("max_bad_rows", static_cast<std::int64_t O::*>(&B::max_bad_rows),
          "Bad rows of the index files (and unusable images) to skip, with a warning per file "
          "that counts them and shows the first, before stopping with an error; 0 stops at the "
          "first.")
      .min(0);
  s.field("max_image_pixels", static_cast<std::int64_t O::*>(&B::max_image_pixels),
          "Largest width × height accepted, checked in the file header before decoding (PIL's "
          "decompression-bomb limit by default).")
      .min(1);
}

// The splits of every image dataset; a split's index numbers its random streams.
const std::vector<Split>& image_splits();
std::uint64_t split_index(Split split);
// The value of `split` among one per split (train, val, test).
std::int64_t per_split(Split split, std::int64_t train, std::int64_t val, std::int64_t test);

// Reports, on `field`, a condition named twice or a name that cannot be part of a triplet-list
// file name (wscsl make-triplets writes one file per condition).
void check_condition_names(const std::vector<std::string>& names, const std::string& field,
                           FieldChecker& c);

class ImageDataset : public Dataset {
 public:
  ~ImageDataset() override;

  // The rows skipped so far (index-file rows and unusable images). Each load of a split warns on
  // stderr about the files whose skipped rows grew since (BadRows::unreported), those read when
  // the dataset was made included.
  const BadRows& bad_rows() const { return bad_; }
  // Images this process decoded into the store: 0 when the store was built already.
  std::int64_t decoded_images() const { return store_ ? store_->decoded_images() : 0; }

 protected:
  explicit ImageDataset(const ImageDatasetOptions& options);

  // info() with the image geometry (3 × image_size × image_size) and preparation filled in.
  DatasetInfo image_info(std::vector<ConditionInfo> conditions, std::vector<Split> splits) const;

  // The image list, read once on first use; problems go through `bad`.
  virtual ImageList read_image_list(BadRows& bad) = 0;
  // One split: triplets (ids into the image list), their conditions, per-image factors, reversed
  // flags. Problems go through `bad`.
  virtual SplitData read_split(Split split, const ImageList& images, BadRows& bad) = 0;

  const ImageList& image_list();
  BadRows& bad_rows_budget() { return bad_; }
  // The ids among `ids` that are usable (the others become bad rows of the image list), opening
  // or building the store first: a dataset that draws its triplets checks its images first, so
  // that no drawn triplet is lost to an unusable image.
  std::vector<std::int64_t> usable(const std::vector<std::int64_t>& ids);

  SplitData load_split(Split split) final;
  at::Tensor load_images(Split split, const at::Tensor& ids, const ImageRequest& request) final;

 private:
  // Opens the store on first use and checks `ids`; unusable ones become bad rows of the image list
  // (each once).
  void check_images(const std::vector<std::int64_t>& ids);
  bool unusable(std::int64_t id) const { return !store_->problem(id).empty(); }
  ImagePreparation preparation() const;

  ImageDatasetOptions options_;
  BadRows bad_;
  std::unique_ptr<ImageList> images_;
  std::unique_ptr<ImageStore> store_;
  std::vector<bool> reported_;  // by image id: unusable and counted as a bad row
};

}  // namespace wscsl
