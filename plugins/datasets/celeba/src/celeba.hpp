// Celeb-A with the protocol of DiscoverNet: conditions are chosen binary attributes (the paper's
// 8 by default), or Celeb-A†'s 5 multi-valued conditions merged from 20 attributes; triplets are
// drawn per condition within each official partition, equally many per condition.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/labelled_images.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::celeba {

// Binary attributes as conditions, or Celeb-A†'s merged multi-valued conditions.
enum class Variant { Attributes, Merged };

struct CelebaOptions : ImageDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  CelebaOptions() {}

  std::string root;
  std::string images = "img_align_celeba";
  Variant variant = Variant::Attributes;
  std::vector<std::string> conditions = {"5_o_Clock_Shadow", "Attractive", "Bags_Under_Eyes",
                                         "Eyeglasses",       "Male",       "Smiling",
                                         "Wearing_Lipstick", "Young"};
  std::int64_t seed = 0;
  // DiscoverNet's sizes: 400,000 / 80,000 / 160,000.
  std::int64_t train_triplets = 400000;
  std::int64_t val_triplets = 80000;
  std::int64_t test_triplets = 160000;
};

// A condition of Celeb-A† (supplementary Table 1): four binary attributes merged into one
// condition with at most `values` values.
struct MergedCondition {
  const char* name;
  std::size_t values;
  std::array<const char*, 4> attributes;
};
extern const std::array<MergedCondition, 5> kMergedConditions;

// The merge rule. An image's raw value is the set of the four attributes it has (a 4-bit code,
// bit i = attribute i); the condition's values are the `values` most frequent codes over all
// images (ties: the smaller code first), numbered by decreasing frequency; an image with a rarer
// code has an unknown value (-1) under that condition. Returns the value of each image, and the
// kept codes in value order.
std::pair<std::vector<double>, std::vector<unsigned>> merge_codes(
    const std::vector<unsigned>& codes, std::size_t values);

// "none", or the attributes of a code joined by '+'.
std::string code_name(const MergedCondition& c, unsigned code);

class Celeba final : public ImageDataset {
 public:
  using Options = CelebaOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Celeba(const Options& options);

  DatasetInfo info() const override;

 protected:
  ImageList read_image_list(BadRows& bad) override;
  SplitData read_split(Split split, const ImageList& images, BadRows& bad) override;
  std::optional<SplitAttributes> load_attributes(Split split) override;

 private:
  Options options_;
  std::filesystem::path root_;
  LabelledImages labelled_;
};

}  // namespace wscsl::celeba
