// UT-Zappos-50k in the layout of CSN's release: an image list, per-condition triplet lists
// ("anchor far close", or DiscoverNet's `_half_reverse` lists with a 4th column), and the image
// folder. The loaders pool the chosen conditions' triplets, shuffle them and keep a prefix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/data/image_dataset.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::ut_zappos {

struct UtZapposOptions : ImageDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  UtZapposOptions() {}

  std::string root;
  std::string images = "ut-zap50k-images";
  std::vector<std::string> conditions = {"class", "closure", "gender", "heel"};
  bool half_reverse = false;
  std::int64_t seed = 0;
  // DiscoverNet's totals (train 200k, val 20k, test 40k); 0 keeps every triplet.
  std::int64_t train_triplets = 200000;
  std::int64_t val_triplets = 20000;
  std::int64_t test_triplets = 40000;
};

class UtZappos final : public ImageDataset {
 public:
  using Options = UtZapposOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit UtZappos(const Options& options);

  DatasetInfo info() const override;

 protected:
  ImageList read_image_list(BadRows& bad) override;
  SplitData read_split(Split split, const ImageList& images, BadRows& bad) override;

 private:
  Options options_;
  std::filesystem::path root_;
};

}  // namespace wscsl::ut_zappos
