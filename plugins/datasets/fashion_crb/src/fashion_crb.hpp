// Fashion-CRB: Fashion-MNIST garments rendered under independent colour, rotation and background
// factors; each factor (and the garment category) is one similarity condition.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wscsl/data/fashion_render.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::fashion_crb {

// The renderer is shared with the outfit benchmark (libwscsl_data).
using data::background_value;
using data::draw_factors;
using data::kBackgroundNames;
using data::kCanvasSize;
using data::kCategoryNames;
using data::kColorNames;
using data::kGarmentSize;
using data::kNumBackgrounds;
using data::kNumCategories;
using data::kNumColors;
using data::kNumRotations;
using data::kRotationNames;
using data::render;
using data::SampleFactors;

// The four rendered factors, each of which can be a similarity condition.
enum class Factor { Category, Color, Rotation, Background };
const EnumChoices<Factor>& factor_choices();

struct FashionCrbOptions {
  std::string root = "/usr/share/datasets/fashion-mnist";
  std::int64_t seed = 0;
  std::vector<Factor> conditions = {Factor::Category, Factor::Color, Factor::Rotation,
                                    Factor::Background};
  std::int64_t train_items = 60000;
  std::int64_t val_items = 5000;
  std::int64_t test_items = 5000;
  std::int64_t train_triplets = 100000;
  std::int64_t val_triplets = 8000;
  std::int64_t test_triplets = 20000;
};

// The rendered items of one split: images [N, 3, 32, 32] uint8 and all four factors per item.
struct RenderedSplit {
  torch::Tensor images;
  std::vector<SampleFactors> factors;
};

// Renders items source[first .. first+count) of a Fashion-MNIST file pair.
RenderedSplit render_split(const std::vector<std::uint8_t>& garments,
                           const std::vector<std::uint8_t>& labels, std::int64_t first,
                           std::int64_t count, std::uint64_t seed);

// Draws `count` triplets (anchor, close, far) with conditions spread equally over the values'
// columns of `factor_values` [N][F]: for condition k the close item shares the anchor's value of
// factor k and the far item does not. The result is shuffled. Returns triplets [T, 3] and
// conditions [T].
std::pair<torch::Tensor, torch::Tensor> draw_triplets(
    const std::vector<std::vector<int>>& factor_values, std::int64_t count, std::uint64_t seed);

class FashionCrb final : public Dataset {
 public:
  using Options = FashionCrbOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit FashionCrb(const Options& options);

  DatasetInfo info() const override;

 protected:
  SplitData load_split(Split split) override;
  torch::Tensor load_images(Split split, const torch::Tensor& ids,
                            const ImageRequest& request) override;

 private:
  static int factor_of(const SampleFactors& f, Factor condition);
  Options options_;
  std::map<Split, torch::Tensor> images_;  // uint8 [N, 3, 32, 32] per loaded split
};

}  // namespace wscsl::fashion_crb
