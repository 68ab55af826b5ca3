// The plan of the embedded outfit benchmark: items, outfits and splits drawn from the hidden
// process that docs/datasets.md describes, with the tasks of each split.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include <fmt/format.h>

#include "plan_parts.hpp"
#include "wscsl/error.hpp"

namespace wscsl::data {
namespace {

std::int64_t preset_outfits(OutfitPreset preset) {
  switch (preset) {
    case OutfitPreset::Tiny:
      return 200;
    case OutfitPreset::Medium:
      return 4500;
  }
  return 0;
}

constexpr int kMaxDisjointOutfitSize = 16;
// Weights of outfit sizes kMinOutfitSize..kMaxOutfitSize (per 1,004): a mode at 4 and a long tail.
constexpr int kSizeWeights[] = {100, 170, 200, 170, 120, 80, 50, 35, 22,
                                15,  10,  8,   6,   5,   4,  3,  3,  3};

// Weights of the types that fill an outfit after its core garments and shoes.
constexpr int kFillWeights[kNumItemTypes] = {
    8,   // accessories
    2,   // all-body
    16,  // bags
    3,   // bottoms
    10,  // hats
    16,  // jewellery
    10,  // outerwear
    8,   // scarves
    5,   // shoes
    10,  // sunglasses
    6,   // tops
};
constexpr double kAllBodyCore = 0.25;
constexpr double kShoes = 0.85;
constexpr double kReuse = 0.3;
constexpr double kAttributeNoise = 0.1;
constexpr double kIndexSkip = 0.1;

// Real split sizes (Polyvore Outfits), scaled to the preset's number of outfits.
constexpr double kRealOutfits = 68306;
constexpr double kNondisjointShares[2] = {53306 / kRealOutfits, 5000 / kRealOutfits};
constexpr double kDisjointShares[3] = {16995 / kRealOutfits, 3000 / kRealOutfits,
                                       15145 / kRealOutfits};

// Streams of the seed, one per independent part of the process.
enum Stream : std::uint64_t {
  kOutfitStream = 1,
  kTextStream = 2,
  kNondisjointStream = 3,
  kDisjointStream = 4,
  kTaskStream = 5,    // + 3 · variant + split
  kSourceStream = 20  // + Fashion-MNIST class
};

constexpr int kAttributeValues[3] = {kNumColors, kNumBackgrounds, kNumRotations};

int draw_weighted(Rng& rng, const int* weights, int count) {
  int total = 0;
  for (int i = 0; i < count; ++i)
    total += weights[i];
  int r = static_cast<int>(rng.below(static_cast<std::uint64_t>(total)));
  for (int i = 0; i < count; ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return count - 1;
}

std::vector<ItemType> compose_outfit(Rng& rng, int size) {
  std::vector<ItemType> types;
  if (rng.uniform() < kAllBodyCore) {
    types.push_back(ItemType::AllBody);
  } else {
    types.push_back(ItemType::Tops);
    types.push_back(ItemType::Bottoms);
  }
  if (static_cast<int>(types.size()) < size && rng.uniform() < kShoes)
    types.push_back(ItemType::Shoes);
  while (static_cast<int>(types.size()) < size)
    types.push_back(static_cast<ItemType>(draw_weighted(rng, kFillWeights, kNumItemTypes)));
  types.resize(static_cast<std::size_t>(size));
  rng.shuffle(types);
  return types;
}

// For each (type, values of its two expressed attributes): the items so far that show them.
class ItemPool {
 public:
  static std::int64_t key(ItemType type, const SampleFactors& f) {
    const auto [a, b] = expressed_attributes(type);
    return (static_cast<std::int64_t>(type) * 8 + attribute_of(f, a)) * 8 + attribute_of(f, b);
  }
  std::vector<std::int64_t>& operator[](std::int64_t k) { return pool_[k]; }

 private:
  std::map<std::int64_t, std::vector<std::int64_t>> pool_;
};

// The next source image of each Fashion-MNIST class, in a seeded order of that class's images.
class SourceImages {
 public:
  SourceImages(const std::vector<std::uint8_t>& labels, const std::filesystem::path& file,
               std::uint64_t seed) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] >= kNumCategories)
        throw DataError(
            fmt::format("{}: label {} of item {} is outside 0..9", file.string(), labels[i], i));
      of_class_[labels[i]].push_back(static_cast<std::int64_t>(i));
    }
    for (int c = 0; c < kNumCategories; ++c) {
      std::vector<std::int64_t>& images = of_class_[static_cast<std::size_t>(c)];
      if (images.empty())
        throw DataError(fmt::format("{}: no image of class {}, which the outfit benchmark renders",
                                    file.string(), c));
      const std::vector<std::int64_t> order =
          seeded_permutation(mix_seed(seed, kSourceStream + static_cast<std::uint64_t>(c)),
                             static_cast<std::int64_t>(images.size()));
      std::vector<std::int64_t> shuffled;
      for (std::int64_t i : order)
        shuffled.push_back(images[static_cast<std::size_t>(i)]);
      images = shuffled;
    }
  }
  // Images are reused only after every image of the class has been used once.
  std::int64_t next(int fashion_class) {
    std::vector<std::int64_t>& images = of_class_[static_cast<std::size_t>(fashion_class)];
    std::size_t& n = used_[static_cast<std::size_t>(fashion_class)];
    return images[n++ % images.size()];
  }

 private:
  std::array<std::vector<std::int64_t>, kNumCategories> of_class_;
  std::array<std::size_t, kNumCategories> used_{};
};

std::int64_t share(std::int64_t n, double fraction) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(n) * fraction));
}

}  // namespace

OutfitBenchmarkPlan plan_outfit_benchmark(const OutfitBenchmarkOptions& options,
                                          const std::vector<std::uint8_t>& labels) {
  const std::uint64_t seed = options.seed;
  const std::int64_t total = preset_outfits(options.preset);
  OutfitBenchmarkPlan plan;
  SourceImages sources(labels, options.fashion_mnist_root / "train-labels-idx1-ubyte.gz", seed);
  std::array<std::vector<int>, kNumItemTypes> categories_of_type;
  for (std::size_t c = 0; c < fine_categories().size(); ++c)
    categories_of_type[static_cast<std::size_t>(fine_categories()[c].type)].push_back(
        static_cast<int>(c));

  // Outfits and their items.
  Rng rng(mix_seed(seed, kOutfitStream));
  ItemPool pool;
  for (std::int64_t k = 0; k < total; ++k) {
    BenchmarkOutfit outfit;
    outfit.set_id = std::to_string(200000001 + 7 * k);
    for (int a = 0; a < 3; ++a)
      outfit.style[static_cast<std::size_t>(a)] =
          static_cast<int>(rng.below(static_cast<std::uint64_t>(kAttributeValues[a])));
    const int size = kMinOutfitSize +
                     draw_weighted(rng, kSizeWeights, static_cast<int>(std::size(kSizeWeights)));
    for (ItemType type : compose_outfit(rng, size)) {
      SampleFactors wanted;
      wanted.color = outfit.style[0];
      wanted.background = outfit.style[1];
      wanted.rotation = outfit.style[2];
      std::vector<std::int64_t> reusable;
      if (rng.uniform() < kReuse) {
        for (std::int64_t i : pool[ItemPool::key(type, wanted)])
          if (std::find(outfit.items.begin(), outfit.items.end(), i) == outfit.items.end())
            reusable.push_back(i);
      }
      if (!reusable.empty()) {
        outfit.items.push_back(reusable[rng.below(reusable.size())]);
        continue;
      }
      BenchmarkItem item;
      item.item_id = std::to_string(100000001 + 3 * static_cast<std::int64_t>(plan.items.size()));
      item.type = type;
      const auto& choices = categories_of_type[static_cast<std::size_t>(type)];
      item.category = choices[rng.below(choices.size())];
      const FineCategory& category = fine_categories()[static_cast<std::size_t>(item.category)];
      item.source = sources.next(category.fashion_class);
      item.factors = draw_factors(rng, category.fashion_class);
      const auto expressed = expressed_attributes(type);
      std::array<int, 3> values{};
      for (int a = 0; a < 3; ++a) {
        const auto attribute = static_cast<StyleAttribute>(a);
        const auto count = static_cast<std::uint64_t>(kAttributeValues[a]);
        const bool shown = attribute == expressed[0] || attribute == expressed[1];
        values[static_cast<std::size_t>(a)] =
            shown ? outfit.style[static_cast<std::size_t>(a)] : static_cast<int>(rng.below(count));
        if (shown && rng.uniform() < kAttributeNoise)
          values[static_cast<std::size_t>(a)] = static_cast<int>(rng.below(count));
      }
      item.factors.color = values[0];
      item.factors.background = values[1];
      item.factors.rotation = values[2];
      write_item_text(item, mix_seed(mix_seed(seed, kTextStream), plan.items.size()));
      const auto index = static_cast<std::int64_t>(plan.items.size());
      pool[ItemPool::key(type, item.factors)].push_back(index);
      plan.items.push_back(std::move(item));
      outfit.items.push_back(index);
    }
    int index = 1;
    for (std::size_t i = 0; i < outfit.items.size(); ++i) {
      outfit.indices.push_back(index);
      index += rng.uniform() < kIndexSkip ? 2 : 1;
    }
    plan.outfits.push_back(std::move(outfit));
  }

  // Nondisjoint: the outfits split at random.
  {
    const std::vector<std::int64_t> order =
        seeded_permutation(mix_seed(seed, kNondisjointStream), total);
    const std::int64_t train = share(total, kNondisjointShares[0]);
    const std::int64_t valid = share(total, kNondisjointShares[1]);
    for (std::int64_t i = 0; i < total; ++i) {
      const std::size_t split = i < train ? 0 : (i < train + valid ? 1 : 2);
      plan.nondisjoint[split].outfits.push_back(order[static_cast<std::size_t>(i)]);
    }
  }
  // Disjoint: test and valid first, then the train outfits that share no item with them.
  {
    const std::vector<std::int64_t> order =
        seeded_permutation(mix_seed(seed, kDisjointStream), total);
    const std::int64_t targets[3] = {share(total, kDisjointShares[0]),
                                     share(total, kDisjointShares[1]),
                                     share(total, kDisjointShares[2])};
    std::unordered_set<std::int64_t> held_out;
    for (std::int64_t o : order) {
      const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(o)];
      if (static_cast<int>(outfit.items.size()) > kMaxDisjointOutfitSize) continue;
      std::size_t split = 2;
      if (static_cast<std::int64_t>(plan.disjoint[2].outfits.size()) >= targets[2]) split = 1;
      if (split == 1 && static_cast<std::int64_t>(plan.disjoint[1].outfits.size()) >= targets[1])
        split = 0;
      if (split == 0) {
        if (static_cast<std::int64_t>(plan.disjoint[0].outfits.size()) >= targets[0]) break;
        if (std::any_of(outfit.items.begin(), outfit.items.end(),
                        [&](std::int64_t i) { return held_out.count(i) > 0; }))
          continue;
      } else {
        held_out.insert(outfit.items.begin(), outfit.items.end());
      }
      plan.disjoint[split].outfits.push_back(o);
    }
  }
  for (int v = 0; v < 2; ++v) {
    auto& variant = v == 0 ? plan.nondisjoint : plan.disjoint;
    for (std::size_t s = 0; s < 3; ++s) {
      Rng task(mix_seed(seed, kTaskStream + 3 * static_cast<std::uint64_t>(v) + s));
      variant[s].compatibility = draw_compatibility(task, plan, variant[s].outfits, kMaxOutfitSize,
                                                    false, variant[s].outfits.size());
      variant[s].blanks = draw_polyvore_questions(task, plan, variant[s].outfits);
    }
  }
  for (std::size_t s = 0; s < 3; ++s)
    plan.maryland[s].outfits = plan.nondisjoint[s].outfits;
  {
    SplitPlan& test = plan.maryland[2];
    Rng task(mix_seed(seed, kTaskStream + 6));
    // Han's test file has about 4 incompatible outfits to 3 compatible ones.
    test.compatibility = draw_compatibility(
        task, plan, test.outfits, plan.maryland_max_items, true,
        static_cast<std::size_t>(share(static_cast<std::int64_t>(test.outfits.size()), 4.0 / 3.0)));
    test.blanks = draw_maryland_questions(task, plan, test.outfits);
  }
  return plan;
}

}  // namespace wscsl::data
