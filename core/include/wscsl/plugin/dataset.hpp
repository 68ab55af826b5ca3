// Dataset: decoded images, per-image factor labels, and triplet lists per split.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/plugin/component.hpp"

namespace wscsl {

struct ConditionInfo {
  std::string name;                 // "color"
  std::vector<std::string> values;  // value names ("red", ...); empty when values are numeric
};

struct DatasetInfo {
  std::vector<ConditionInfo> conditions;  // the similarity conditions, in label order
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::vector<std::string> splits;  // e.g. {"train", "val", "test"}

  std::int64_t num_conditions() const { return static_cast<std::int64_t>(conditions.size()); }
  std::vector<std::string> condition_names() const;
  bool has_split(const std::string& name) const;
};

// Triplets use one order everywhere in wscsl: (anchor, close, far) — the anchor is more similar
// to `close` than to `far` under the triplet's condition. Dataset plugins convert file formats
// (CSN's "anchor far close") into this order.
struct SplitData {
  std::int64_t num_images = 0;
  at::Tensor factors;     // [N, F] int64 value index of each condition per image, -1 = unknown;
                          // undefined when the dataset has no per-image labels
  at::Tensor triplets;    // [T, 3] int64 image ids (anchor, close, far)
  at::Tensor conditions;  // [T] int64 condition of each triplet, -1 = unknown; undefined if none
};

struct ImageRequest {
  bool augment = false;    // training-time augmentation (e.g. random flips)
  std::uint64_t seed = 0;  // derive all augmentation randomness from this (and the image id)
};

class Dataset : public Component {
 public:
  static constexpr Kind kind_v = Kind::Dataset;
  ~Dataset() override;
  Kind kind() const noexcept final { return Kind::Dataset; }

  // Cheap: must not read image data. Constant over the dataset's life.
  virtual DatasetInfo info() const = 0;

  // Loads a split on first use (decoding images once), checks it, and keeps it.
  const SplitData& split(const std::string& name);

  // float32 [B, C, H, W] images of `ids` (int64 [B]) from `split`.
  at::Tensor images(const std::string& split, const at::Tensor& ids, const ImageRequest& request);

 protected:
  virtual SplitData load_split(const std::string& name) = 0;
  virtual at::Tensor load_images(const std::string& split, const at::Tensor& ids,
                                 const ImageRequest& request) = 0;

 private:
  const DatasetInfo& cached_info();
  std::map<std::string, SplitData> splits_;
  std::optional<DatasetInfo> info_;
};

}  // namespace wscsl
