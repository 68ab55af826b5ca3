// Polyvore Outfits (Vasileva et al., ECCV 2018) in the layout of its release: outfits of items
// with coarse types, training triplets drawn from the outfits with the type pair as condition,
// and the two outfit tasks (compatibility lines, fill-in-the-blank questions) of every split.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "wscsl/data/outfit_dataset.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::polyvore_outfits {

// Which of the release's two splits of the outfits (its folders nondisjoint/ and disjoint/).
enum class ReleaseSplit { Nondisjoint, Disjoint };
// Whether to write the embedded outfit benchmark under `root` first
// (wscsl/data/outfit_benchmark.hpp).
enum class Generate { None, Tiny, Medium };

inline constexpr const char* kMetadataFile = "polyvore_item_metadata.json";
inline constexpr const char* kTypeSpacesFile = "typespaces.p";
// Optional: the fine-grained category names the "category" text field uses when present.
inline constexpr const char* kCategoriesFile = "categories.csv";

struct PolyvoreOutfitsOptions : OutfitDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  PolyvoreOutfitsOptions() {}

  std::string root;
  ReleaseSplit split = ReleaseSplit::Nondisjoint;
  Generate generate = Generate::None;
  std::int64_t generator_seed = 1;
};

// The folder of a split's files ("<root>/nondisjoint") and the released name of a wscsl split
// ("valid" for val).
std::filesystem::path split_folder(const std::filesystem::path& root, ReleaseSplit split);
std::string file_split(Split split);

class PolyvoreOutfits final : public OutfitDataset {
 public:
  using Options = PolyvoreOutfitsOptions;
  static Schema<Options> schema();
  explicit PolyvoreOutfits(const Options& options);

 protected:
  OutfitCatalog read_catalog(FileProblems& problems) override;
  std::filesystem::path released_text_features() const override;

 private:
  std::filesystem::path root_, folder_;
};

}  // namespace wscsl::polyvore_outfits
