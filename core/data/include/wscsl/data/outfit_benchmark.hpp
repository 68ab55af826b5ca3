// The embedded outfit benchmark: outfits of Fashion-MNIST garments rendered with the Fashion-CRB
// renderer, drawn from a hidden compatibility process and written in the Polyvore Outfits layout
// (plus a Maryland-style variant). docs/datasets.md describes the generative process.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wscsl/data/fashion_render.hpp"
#include "wscsl/data/item_text.hpp"

namespace wscsl::data {

enum class OutfitPreset { Tiny, Medium };

struct OutfitBenchmarkOptions {
  OutfitPreset preset = OutfitPreset::Medium;
  std::uint64_t seed = 1;
  std::filesystem::path fashion_mnist_root = "/usr/share/datasets/fashion-mnist";
};

// Writes the embedded outfit benchmark in the Polyvore Outfits layout under `root` unless a
// complete one made with the same options is there (a stamp file); safe against concurrent
// processes (a lock) and interruption (written aside, then renamed), and never deletes data it did
// not write.
void ensure_outfit_benchmark(const std::filesystem::path& root,
                             const OutfitBenchmarkOptions& options);

// --- The plan: everything the files hold, before any pixel is rendered --------------------------

// The 11 coarse types of Polyvore Outfits, in the order of their names (the typespaces order).
enum class ItemType {
  Accessories,
  AllBody,
  Bags,
  Bottoms,
  Hats,
  Jewellery,
  Outerwear,
  Scarves,
  Shoes,
  Sunglasses,
  Tops
};
inline constexpr int kNumItemTypes = 11;
const char* item_type_name(ItemType type);

// How a fine category reshapes its 28×28 garment before rendering, so that types sharing a
// Fashion-MNIST class still look different.
enum class GarmentForm {
  Full,    // as it is
  Half,    // shrunk to 14×14, centred
  Pair,    // two 14×14 copies side by side
  Wide,    // squashed to half height, centred
  Narrow,  // squashed to half width, centred
};

struct FineCategory {
  int id;            // category_id in the metadata, categoryid in the Maryland layout
  const char* name;  // as in titles
  ItemType type;
  int fashion_class;  // the Fashion-MNIST class its garments come from
  GarmentForm form;
};
const std::vector<FineCategory>& fine_categories();

// Writes the reshaped 28×28 garment of `form` into `out` (28×28).
void reshape_garment(const std::uint8_t* garment, GarmentForm form, std::uint8_t* out);

// The three style attributes of the hidden process, shown by the renderer's factors: colour
// (SampleFactors::color, 6 values), texture (::background, 6) and cut (::rotation, 4).
enum class StyleAttribute { Colour, Texture, Cut };
// The two attributes items of `type` take from their outfit's style.
std::array<StyleAttribute, 2> expressed_attributes(ItemType type);

struct BenchmarkItem {
  std::string item_id;
  int category = 0;  // index into fine_categories()
  ItemType type = ItemType::Tops;
  std::int64_t source = 0;  // the Fashion-MNIST training image it renders
  SampleFactors factors;
  std::string title, url_name, description;
};

struct BenchmarkOutfit {
  std::string set_id;
  std::array<int, 3> style{};       // colour, texture, cut
  std::vector<std::int64_t> items;  // indices into OutfitBenchmarkPlan::items
  std::vector<int> indices;         // the `index` of each item: from 1, increasing, may skip
};

// An item as an outfit lists it, `<set_id>_<index>` in the files.
struct OutfitSlot {
  std::int64_t outfit = 0;  // index into OutfitBenchmarkPlan::outfits
  int position = 0;         // into that outfit's items
};

struct CompatibilityLine {
  bool compatible = false;
  std::vector<OutfitSlot> items;
};

struct BlankQuestion {
  std::vector<OutfitSlot> question;
  std::array<OutfitSlot, 4> answers{};
  int correct = 0;         // the column of `answers` from the question's outfit
  int blank_position = 1;  // 1-based position of the blank in its outfit
};

struct SplitPlan {
  std::vector<std::int64_t> outfits;  // in file order
  std::vector<CompatibilityLine> compatibility;
  std::vector<BlankQuestion> blanks;
};

enum class BenchmarkSplit { Train, Valid, Test };
inline constexpr std::array<const char*, 3> kBenchmarkSplitNames = {"train", "valid", "test"};

struct OutfitBenchmarkPlan {
  std::vector<BenchmarkItem> items;
  std::vector<BenchmarkOutfit> outfits;
  std::array<SplitPlan, 3> nondisjoint, disjoint;
  // Han's layout: the nondisjoint partition, each outfit cut to its first 8 items; compatibility
  // lines and questions (answer 0 correct, negatives of any type) for the test split only.
  std::array<SplitPlan, 3> maryland;
  int maryland_max_items = 8;
};

// Draws the whole benchmark but its pixels; `labels` are the Fashion-MNIST training labels.
OutfitBenchmarkPlan plan_outfit_benchmark(const OutfitBenchmarkOptions& options,
                                          const std::vector<std::uint8_t>& labels);

// --- Text features: the stand-in for the release's HGLMM vectors (train_hglmm_pca6000.txt) -----

inline constexpr int kTextFeatureSize = 6000;
// Written in the train split's folder of both variants, one line per distinct text key of the
// train split's items (polyvore_text_key of title and url_name): the key, a comma, and the 6000
// values of text_feature(key), comma-separated.
inline constexpr const char* kTextFeatureFile = kReleasedTextFeatures;

// The feature of a text key, a function of its words only (not of the seed): each word (a maximal
// run of a–z and 0–9) adds 8 values drawn from Rng(mix_seed(kTextFeatureSeed, FNV-1a-64 of the
// word's bytes)): for each, a position below(6000), then a value 2·uniform() − 1 (a repeated
// position adds up); the sum is L2-normalised. All zero when the key has no word.
inline constexpr std::uint64_t kTextFeatureSeed = 0x68676c6d6d363030;
std::vector<double> text_feature(std::string_view key);

// The hidden process's dissimilarity of two items: the fraction of the attributes their two types
// both express on which they differ (0 = as compatible as items of one outfit can be).
double hidden_dissimilarity(const BenchmarkItem& a, const BenchmarkItem& b);
// An outfit's hidden score: the mean hidden dissimilarity over its item pairs (lower = better).
double hidden_outfit_score(const std::vector<const BenchmarkItem*>& items);

}  // namespace wscsl::data
