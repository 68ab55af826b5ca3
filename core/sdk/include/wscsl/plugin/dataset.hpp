// Dataset: decoded images, per-image factor labels, and triplet lists per split.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/plugin/component.hpp"
#include "wscsl/plugin/image_preparation.hpp"
#include "wscsl/plugin/outfits.hpp"

namespace wscsl {

enum class Split { Train, Val, Test };

// Every split, in the order a run uses them.
inline constexpr Split kAllSplits[] = {Split::Train, Split::Val, Split::Test};

// "train", "val", "test": the spelling used in messages and on the command line (`wscsl embed
// --split`). A dataset whose files spell a split otherwise ("valid") maps it where it names them.
std::string_view split_name(Split split);
bool parse_split(std::string_view name, Split& split);

struct ConditionInfo {
  std::string name;  // "color"
  // Value names ("red", ...), indexed by the value index of SplitData::factors. For a numeric
  // condition, its distinct measurements in ascending order, written as text.
  std::vector<std::string> values;
  bool numeric = false;  // the values are measurements: closeness between them is meaningful
};

struct DatasetInfo {
  std::vector<ConditionInfo> conditions;  // the similarity conditions, in label order
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  // How an image becomes model input (image_preparation.hpp): tools that bring image files of
  // their own prepare them so, and undo it to show pictures. A dataset that generates its images
  // declares FilePreparation::None and the normalisation of what images() returns.
  ImagePreparation images;
  std::vector<Split> splits;  // e.g. {Split::Train, Split::Val, Split::Test}
  // Triplets per split where the dataset knows them without loading the split (a generated
  // count); a split it does not name is counted when it loads.
  std::map<Split, std::int64_t> triplet_counts;
  // The coarse item types of an outfit dataset ("tops", "shoes", ...); empty for other datasets.
  std::vector<std::string> item_types;
  // The text fields every item of every split has (SplitData::texts), e.g. {"title", "category"};
  // a dataset that names one also provides Resource::ItemText of that name in its contract.
  std::vector<std::string> text_fields;
  // The precomputed text features the dataset's release ships (the HGLMM layout, keyed by the
  // "title" text), where they are; empty when it has none. The fact dataset.text_features.
  std::filesystem::path text_features;

  std::int64_t num_conditions() const { return static_cast<std::int64_t>(conditions.size()); }
  std::vector<std::string> condition_names() const;
  bool has_split(Split split) const;
};

// The files a split's parts were read from, for messages about what they hold: a split that lacks
// what an evaluator needs (Resource::SplitTriplets ...) is refused naming them. Empty where the
// dataset generates the part or has none.
struct SplitFiles {
  // The triplet lists, or the files the triplets are drawn from (outfits, attributes).
  std::vector<std::filesystem::path> triplets;
  std::filesystem::path compatibility;    // the compatibility lines
  std::filesystem::path blanks;           // the fill-in-the-blank questions
  std::filesystem::path queries = {};     // the attribute-retrieval query lines
  std::filesystem::path candidates = {};  // the attribute-retrieval candidate lines
};

// Attribute-specific retrieval (the protocol of ASEN and its successors): lines "image condition
// value", each an image id of the split, a condition and the image's value index under it. Each
// query ranks every candidate of its condition; a candidate is relevant when its value is the
// query's (Resource::AttributeQueries).
struct AttributeQueries {
  at::Tensor queries;     // [Q, 3] int64 (image id, condition, value index)
  at::Tensor candidates;  // [C, 3] int64 (image id, condition, value index)
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
  // [T] bool: the source file presented this triplet reversed (DiscoverNet's `_half_reverse`
  // lists). `triplets` is always in the true order; an evaluator that measures how a model reacts
  // to the order it is shown can show these as (anchor, far, close). Undefined if none.
  at::Tensor reversed;
  // Outfit datasets only (Resource::Outfits): item types, compatibility lines, FITB questions.
  std::optional<OutfitData> outfits;
  // Attribute-retrieval datasets only (Resource::AttributeQueries): the split's query and
  // candidate lines.
  std::optional<AttributeQueries> attribute_queries;
  // Per text field of DatasetInfo::text_fields: the text of every image id ([N] strings; "" = the
  // item has none).
  std::map<std::string, std::vector<std::string>> texts;
  SplitFiles files;
};

// A split's per-image attributes and files, read without decoding any image: what
// `wscsl make-triplets` draws triplets from.
struct SplitAttributes {
  std::filesystem::path image_root;  // `files` are relative to it
  std::vector<std::string> files;    // [N] the file of each image id; empty if images are generated
  at::Tensor values;   // [N, F] float64: value index (categorical) or measurement (numeric) of each
                       // condition, NaN where unknown
  at::Tensor members;  // [M] int64 ids of the images that belong to the split
};

struct ImageRequest {
  bool augment = false;    // training-time augmentation (e.g. random flips)
  std::uint64_t seed = 0;  // derive all augmentation randomness from this, the image id and its
                           // position: first_position + its index in the request
  // Where the request's first image sits in the step's whole batch: processes that share a batch
  // each request their part, and the augmentation must not depend on how it was shared.
  std::uint64_t first_position = 0;
};

class Dataset : public Component {
 public:
  static constexpr Kind kind_v = Kind::Dataset;
  ~Dataset() override;
  Kind kind() const noexcept final { return Kind::Dataset; }

  // Cheap: must not read image data. Constant over the dataset's life.
  virtual DatasetInfo info() const = 0;

  // Loads a split on first use (decoding images once), checks it, and keeps it.
  const SplitData& split(Split split);

  // float32 [B, C, H, W] images of `ids` (int64 [B]) from `split`.
  at::Tensor images(Split split, const at::Tensor& ids, const ImageRequest& request);

  // The split's per-image attributes, or nothing when the dataset has none to offer.
  std::optional<SplitAttributes> attributes(Split split);

  // The triplets to train on in `epoch` (from 0): the split's own; for a dataset that draws its
  // negatives afresh every epoch (as the released Polyvore loader does at every fetch), the
  // split's anchors and closes with that epoch's `far` column; for one that draws whole triplets
  // afresh (as ASEN's sampler does), any triplets of the split's count. The condition of row i
  // stays SplitData::conditions[i] in every epoch. A function of (seed, epoch) only, so that a
  // resumed run sees the same triplets.
  at::Tensor epoch_triplets(Split split, std::int64_t epoch, std::uint64_t seed);

 protected:
  virtual SplitData load_split(Split split) = 0;
  virtual at::Tensor load_images(Split split, const at::Tensor& ids,
                                 const ImageRequest& request) = 0;
  virtual std::optional<SplitAttributes> load_attributes(Split split);
  // Default: the split's triplets, every epoch.
  virtual at::Tensor draw_epoch_triplets(Split split, std::int64_t epoch, std::uint64_t seed);

 private:
  const DatasetInfo& cached_info();
  std::map<Split, SplitData> splits_;
  std::optional<DatasetInfo> info_;
};

}  // namespace wscsl
