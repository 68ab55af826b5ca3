// The attribute-specific retrieval splits ASEN++ released for FashionAI, DARN and DeepFashion
// (attribute_split_files.hpp), or any folder in that layout: conditions are the attributes,
// training triplets are drawn every epoch as the released sampler draws them, and the validation
// and test splits are the query and candidate lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/data/image_dataset.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::attribute_splits {

// The attribute tables built in, as the released configurations give them; the generated region
// benchmark (region_benchmark.hpp), written into `root`; or a table the pipeline gives
// (`attributes`, `values`).
enum class Benchmark { FashionAI, DARN, DeepFashion, Regions, Custom };

struct AttributeTable {
  std::vector<std::string> names;
  std::vector<std::int64_t> values;  // value count of each attribute
  // The value names of each attribute; empty where the release numbers them without names.
  std::vector<std::vector<std::string>> value_names = {};
};
// The table of a built-in benchmark.
AttributeTable benchmark_table(Benchmark benchmark);

struct AttributeSplitsOptions : ImageDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  AttributeSplitsOptions() {}

  std::string root;
  std::string images;
  Benchmark benchmark = Benchmark::Custom;
  std::vector<std::string> attributes;
  std::vector<std::int64_t> values;
  std::int64_t epoch_triplets = 100000;
  std::int64_t seed = 0;
  std::vector<std::int64_t> generated_images = {512, 128, 128};
  std::int64_t generator_seed = 1;
};

// The training images holding each value of each attribute, from which triplets are drawn.
struct ValuePools {
  // [attribute][value]: the image ids holding it, in label-file order.
  std::vector<std::vector<std::vector<std::int64_t>>> images;
  // [attribute]: the values with at least two images (an anchor and a close image).
  std::vector<std::vector<std::int64_t>> anchor_values;
};

class AttributeSplits final : public ImageDataset {
 public:
  using Options = AttributeSplitsOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit AttributeSplits(const Options& options);

  DatasetInfo info() const override;

 protected:
  ImageList read_image_list(BadRows& bad) override;
  SplitData read_split(Split split, const ImageList& images, BadRows& bad) override;
  at::Tensor draw_epoch_triplets(Split split, std::int64_t epoch, std::uint64_t seed) override;

 private:
  SplitData read_training(BadRows& bad);
  SplitData read_queries(Split split, BadRows& bad);
  // The triplets of one epoch: row i under attribute conditions[i].
  at::Tensor draw(std::uint64_t seed) const;

  Options options_;
  AttributeTable table_;
  std::vector<std::int64_t> first_id_;  // per split (train, val, test): its first image id
  std::vector<std::int64_t> counts_;    // per split: its images
  ValuePools pools_;
  std::vector<std::int64_t> row_attributes_;  // the attribute of each training row
};

}  // namespace wscsl::attribute_splits
