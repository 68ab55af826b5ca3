#include "wscsl/data/image_dataset.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <torch/types.h>

#include "wscsl/data/csn_layout.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl {
namespace {

// Mirrors the rows of image `pixels` (C × S × S, uint8) in place.
void flip_horizontally(std::uint8_t* pixels, std::int64_t rows, std::int64_t width) {
  for (std::int64_t r = 0; r < rows; ++r)
    std::reverse(pixels + r * width, pixels + (r + 1) * width);
}

}  // namespace

const std::vector<Split>& image_splits() {
  static const std::vector<Split> splits(std::begin(kAllSplits), std::end(kAllSplits));
  return splits;
}

std::uint64_t split_index(Split split) {
  const auto& splits = image_splits();
  return static_cast<std::uint64_t>(std::find(splits.begin(), splits.end(), split) -
                                    splits.begin());
}

std::int64_t per_split(Split split, std::int64_t train, std::int64_t val, std::int64_t test) {
  const std::int64_t values[] = {train, val, test};
  return values[split_index(split)];
}

void check_condition_names(const std::vector<std::string>& names, const std::string& field,
                           FieldChecker& c) {
  if (std::set<std::string>(names.begin(), names.end()).size() != names.size())
    c.error(field, "lists a condition twice");
  for (const std::string& name : names)
    if (!valid_csn_name(name))
      c.error(field, fmt::format("'{}' cannot be part of a file name (letters, digits, '_', '-', "
                                 "'.')",
                                 name));
}

ImageDataset::ImageDataset(const ImageDatasetOptions& options)
    : options_(options), bad_(options.max_bad_rows) {}

ImageDataset::~ImageDataset() = default;

ImagePreparation ImageDataset::preparation() const {
  return {FilePreparation::ResizeCenterCrop, options_.normalize, options_.image_size,
          options_.max_image_pixels,         options_.cache_dir, options_.cache_limit_mb << 20};
}

DatasetInfo ImageDataset::image_info(std::vector<ConditionInfo> conditions,
                                     std::vector<Split> splits) const {
  DatasetInfo d;
  d.conditions = std::move(conditions);
  d.channels = 3;
  d.height = d.width = options_.image_size;
  d.images = preparation();
  d.splits = std::move(splits);
  return d;
}

const ImageList& ImageDataset::image_list() {
  if (!images_) {
    images_ = std::make_unique<ImageList>(read_image_list(bad_));
    reported_.assign(images_->entries.size(), false);
  }
  return *images_;
}

void ImageDataset::check_images(const std::vector<std::int64_t>& ids) {
  const ImageList& list = image_list();
  const auto n = static_cast<std::int64_t>(list.entries.size());
  for (std::int64_t id : ids)
    if (id < 0 || id >= n)
      throw DataError(fmt::format("image id {} is out of range: {} lists {} images", id,
                                  list.index.string(), n));
  if (!store_) {
    ImageStoreOptions o;
    o.image_size = options_.image_size;
    o.max_image_pixels = options_.max_image_pixels;
    o.decode_threads = options_.decode_threads;
    o.cache_dir = image_cache_dir(options_.cache_dir);
    o.limit_bytes = options_.cache_limit_mb * kBytesPerMiB;
    store_ = std::make_unique<ImageStore>(list, o);
  }
  for (std::int64_t id : ids) {
    const auto i = static_cast<std::size_t>(id);
    if (reported_[i] || !unusable(id)) continue;
    reported_[i] = true;
    bad_.reject(list.listing(i), list.entries[i].line, store_->problem(id));
  }
}

std::vector<std::int64_t> ImageDataset::usable(const std::vector<std::int64_t>& ids) {
  check_images(ids);
  std::vector<std::int64_t> out;
  for (std::int64_t id : ids)
    if (!unusable(id)) out.push_back(id);
  return out;
}

SplitData ImageDataset::load_split(Split split) {
  const ImageList& list = image_list();
  SplitData data = read_split(split, list, bad_);
  const at::Tensor flat = data.triplets.reshape({-1}).contiguous();
  std::vector<std::int64_t> ids(flat.data_ptr<std::int64_t>(),
                                flat.data_ptr<std::int64_t>() + flat.numel());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  check_images(ids);
  // Triplets that use an unusable image go with it.
  const auto count = data.triplets.size(0);
  at::Tensor keep = torch::ones({count}, torch::kBool);
  const std::int64_t* t = data.triplets.data_ptr<std::int64_t>();
  bool* k = keep.data_ptr<bool>();
  std::int64_t dropped = 0;
  for (std::int64_t i = 0; i < count; ++i)
    for (int j = 0; j < 3 && k[i]; ++j)
      if (unusable(t[i * 3 + j])) k[i] = false, ++dropped;
  if (dropped > 0) {
    const at::Tensor rows = keep.nonzero().reshape({-1});
    data.triplets = data.triplets.index_select(0, rows);
    if (data.conditions.defined()) data.conditions = data.conditions.index_select(0, rows);
    if (data.reversed.defined()) data.reversed = data.reversed.index_select(0, rows);
  }
  // Rows skipped while the dataset was made (its constructor reads its files) are told here too,
  // once its label is set.
  for (const std::string& warning : bad_.unreported())
    fmt::print(stderr, "wscsl: warning: {}: {}\n", label(), warning);
  if (dropped > 0)
    fmt::print(stderr,
               "wscsl: warning: {}: split '{}': dropped {} triplet{} that use a skipped image\n",
               label(), split_name(split), dropped, dropped == 1 ? "" : "s");
  return data;
}

at::Tensor ImageDataset::load_images(Split, const at::Tensor& ids, const ImageRequest& request) {
  const ImageList& list = image_list();
  const at::Tensor flat = ids.contiguous();
  std::vector<std::int64_t> wanted(flat.data_ptr<std::int64_t>(),
                                   flat.data_ptr<std::int64_t>() + flat.numel());
  check_images(wanted);
  for (std::int64_t id : wanted)
    if (unusable(id))
      throw DataError(fmt::format("image {} ({}:{}) is unusable and was skipped", id,
                                  list.listing(static_cast<std::size_t>(id)).string(),
                                  list.entries[static_cast<std::size_t>(id)].line));
  at::Tensor batch = store_->gather(wanted);
  if (request.augment && options_.flip) {
    std::uint8_t* pixels = batch.data_ptr<std::uint8_t>();
    const std::int64_t size = options_.image_size;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      const std::uint64_t draw = mix_seed(mix_seed(request.seed, request.first_position + i),
                                          static_cast<std::uint64_t>(wanted[i]));
      if (draw >> 63)
        flip_horizontally(pixels + static_cast<std::int64_t>(i) * store_->image_bytes(), 3 * size,
                          size);
    }
  }
  return model_input(preparation(), batch);
}

}  // namespace wscsl
