// The plan of the embedded outfit benchmark: items, outfits, splits, compatibility lines and
// fill-in-the-blank questions, drawn from the hidden process that docs/datasets.md describes.
#include "wscsl/data/outfit_benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include <fmt/format.h>

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

// Outfit sizes 2..19 and their weights (per 1,004): a mode at 4 and a long tail.
constexpr int kMinOutfitSize = 2;
constexpr int kMaxOutfitSize = 19;
constexpr int kMaxDisjointOutfitSize = 16;
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
constexpr int kMaxTries = 100;

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

const char* const kTextureWords[kNumBackgrounds] = {"plain",    "striped", "pinstripe",
                                                    "bias-cut", "checked", "polka-dot"};
const char* const kCutWords[kNumRotations] = {"classic", "asymmetric", "inverted", "sideways"};
// Two brands are not ASCII (their keys lose those letters, as the released loader's do).
const char* const kBrands[] = {"Aster", "Brio",    "Calla", "Dune",        "Ember",    "Fjord",
                               "Gale",  "Halcyon", "Lumen", "Ma\u00f1ana", "No\u00ebl"};
const char* const kSizes[] = {"size s", "size m", "size l"};

int attribute_of(const SampleFactors& f, StyleAttribute a) {
  switch (a) {
    case StyleAttribute::Colour:
      return f.color;
    case StyleAttribute::Texture:
      return f.background;
    case StyleAttribute::Cut:
      return f.rotation;
  }
  return 0;
}

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

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

// Titles are made of words of the item's own attributes, so text carries part of the style.
void write_text(BenchmarkItem& item, std::uint64_t seed) {
  Rng rng(seed);
  const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
  std::vector<std::string> words;
  if (rng.uniform() < 0.15) words.emplace_back(kBrands[rng.below(std::size(kBrands))]);
  if (rng.uniform() < 0.3) words.emplace_back(kCutWords[item.factors.rotation]);
  if (rng.uniform() < 0.7)
    words.emplace_back(kColorNames[static_cast<std::size_t>(item.factors.color)]);
  if (rng.uniform() < 0.5) words.emplace_back(kTextureWords[item.factors.background]);
  words.emplace_back(c.name);
  std::string phrase = join_words(words);
  if (rng.uniform() < 0.1) phrase += std::string(", ") + kSizes[rng.below(std::size(kSizes))];
  const double text = rng.uniform();
  // Some titles come padded with a space and a line break, as scraped ones do.
  const bool padded = rng.uniform() < 0.05;
  item.title = text < 0.15 ? "" : (padded ? " " + phrase + "\n" : phrase);
  item.url_name = text < 0.05 ? "" : slug(phrase);
  if (rng.uniform() < 0.5)
    item.description = fmt::format("{} {} with a {} pattern.",
                                   kColorNames[static_cast<std::size_t>(item.factors.color)],
                                   c.name, kTextureWords[item.factors.background]);
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

// Outfits of one split by the types they contain.
class TypeIndex {
 public:
  TypeIndex(const OutfitBenchmarkPlan& plan, const std::vector<std::int64_t>& outfits,
            int max_items) {
    for (std::size_t o = 0; o < outfits.size(); ++o) {
      const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(outfits[o])];
      const int n = std::min(static_cast<int>(outfit.items.size()), max_items);
      for (int p = 0; p < n; ++p) {
        const auto t = static_cast<std::size_t>(
            plan.items[static_cast<std::size_t>(outfit.items[static_cast<std::size_t>(p)])].type);
        auto& list = with_type_[t];
        if (list.empty() || list.back().outfit != outfits[o]) list.push_back({outfits[o], {}});
        list.back().positions.push_back(p);
      }
    }
  }
  struct Entry {
    std::int64_t outfit;
    std::vector<int> positions;
  };
  const std::vector<Entry>& with_type(ItemType t) const {
    return with_type_[static_cast<std::size_t>(t)];
  }
  // How many outfits other than `outfit` hold an item of type t.
  std::size_t others_with(ItemType t, std::int64_t outfit) const {
    const auto& list = with_type(t);
    const bool own =
        std::any_of(list.begin(), list.end(), [&](const Entry& e) { return e.outfit == outfit; });
    return list.size() - (own ? 1 : 0);
  }

 private:
  std::array<std::vector<Entry>, kNumItemTypes> with_type_;
};

std::int64_t item_at(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  return plan.outfits[static_cast<std::size_t>(s.outfit)]
      .items[static_cast<std::size_t>(s.position)];
}

ItemType type_at(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  return plan.items[static_cast<std::size_t>(item_at(plan, s))].type;
}

std::vector<OutfitSlot> slots_of(const OutfitBenchmarkPlan& plan, std::int64_t outfit,
                                 int max_items) {
  const int n = std::min(
      static_cast<int>(plan.outfits[static_cast<std::size_t>(outfit)].items.size()), max_items);
  std::vector<OutfitSlot> slots;
  for (int p = 0; p < n; ++p)
    slots.push_back({outfit, p});
  return slots;
}

// A slot of type t (any type when `any_type`) in an outfit of the split other than `outfit` and
// `used_outfits`, whose item is not in `used_items`; nothing when none is found in kMaxTries.
bool draw_slot(Rng& rng, const OutfitBenchmarkPlan& plan, const TypeIndex& index,
               const std::vector<std::int64_t>& split_outfits, int max_items, bool any_type,
               ItemType t, std::int64_t outfit,
               const std::unordered_set<std::int64_t>& used_outfits,
               const std::unordered_set<std::int64_t>& used_items, OutfitSlot& out) {
  for (int attempt = 0; attempt < kMaxTries; ++attempt) {
    OutfitSlot s;
    if (any_type) {
      s.outfit = split_outfits[rng.below(split_outfits.size())];
      const int n =
          std::min(static_cast<int>(plan.outfits[static_cast<std::size_t>(s.outfit)].items.size()),
                   max_items);
      s.position = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
    } else {
      const auto& list = index.with_type(t);
      if (list.empty()) return false;
      const auto& entry = list[rng.below(list.size())];
      s.outfit = entry.outfit;
      s.position = entry.positions[rng.below(entry.positions.size())];
    }
    if (s.outfit == outfit || used_outfits.count(s.outfit) || used_items.count(item_at(plan, s)))
      continue;
    out = s;
    return true;
  }
  return false;
}

// Compatibility lines: the outfits in order, then `negatives` lines, line k made from outfit
// k mod P by replacing every item with one from another outfit.
std::vector<CompatibilityLine> draw_compatibility(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                  const std::vector<std::int64_t>& outfits,
                                                  int max_items, bool any_type,
                                                  std::size_t negatives) {
  const TypeIndex index(plan, outfits, max_items);
  std::vector<CompatibilityLine> lines;
  for (std::int64_t o : outfits)
    lines.push_back({true, slots_of(plan, o, max_items)});
  for (std::size_t k = 0; k < negatives && !outfits.empty(); ++k) {
    const std::vector<OutfitSlot> positive = slots_of(plan, outfits[k % outfits.size()], max_items);
    std::unordered_set<std::int64_t> used_items;
    for (const OutfitSlot& s : positive)
      used_items.insert(item_at(plan, s));
    CompatibilityLine line{false, {}};
    for (const OutfitSlot& s : positive) {
      OutfitSlot replacement = s;
      // Kept only when no other outfit of the split supplies its type (or every draw collides).
      if (draw_slot(rng, plan, index, outfits, max_items, any_type, type_at(plan, s), s.outfit, {},
                    used_items, replacement))
        used_items.insert(item_at(plan, replacement));
      line.items.push_back(replacement);
    }
    lines.push_back(line);
  }
  return lines;
}

bool draw_question(Rng& rng, const OutfitBenchmarkPlan& plan, const TypeIndex& index,
                   const std::vector<std::int64_t>& outfits, int max_items, bool any_type,
                   std::int64_t outfit, int blank, bool answer_first, BlankQuestion& q) {
  const std::vector<OutfitSlot> slots = slots_of(plan, outfit, max_items);
  std::unordered_set<std::int64_t> used_items, used_outfits;
  for (const OutfitSlot& s : slots)
    used_items.insert(item_at(plan, s));
  std::array<OutfitSlot, 3> wrong{};
  for (OutfitSlot& w : wrong) {
    if (!draw_slot(rng, plan, index, outfits, max_items, any_type,
                   type_at(plan, slots[static_cast<std::size_t>(blank)]), outfit, used_outfits,
                   used_items, w))
      return false;
    used_outfits.insert(w.outfit);
    used_items.insert(item_at(plan, w));
  }
  q.question.clear();
  for (const OutfitSlot& s : slots)
    if (s.position != blank) q.question.push_back(s);
  q.blank_position = blank + 1;
  q.correct = answer_first ? 0 : static_cast<int>(rng.below(4));
  for (int a = 0, w = 0; a < 4; ++a)
    q.answers[static_cast<std::size_t>(a)] = a == q.correct ? slots[static_cast<std::size_t>(blank)]
                                                            : wrong[static_cast<std::size_t>(w++)];
  return true;
}

bool rare_type(ItemType t) {
  return t == ItemType::Scarves || t == ItemType::Accessories;
}

// Polyvore questions: one per outfit, its blank uniform among the items whose type three other
// outfits of the split hold, plus one for every other scarves or accessories item.
std::vector<BlankQuestion> draw_polyvore_questions(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                   const std::vector<std::int64_t>& outfits) {
  const int all = kMaxOutfitSize;
  const TypeIndex index(plan, outfits, all);
  std::vector<BlankQuestion> questions;
  for (std::int64_t o : outfits) {
    const std::vector<OutfitSlot> slots = slots_of(plan, o, all);
    std::vector<int> eligible;
    for (const OutfitSlot& s : slots)
      if (index.others_with(type_at(plan, s), o) >= 3) eligible.push_back(s.position);
    if (eligible.empty()) continue;
    int blank = static_cast<int>(rng.below(slots.size()));
    if (std::find(eligible.begin(), eligible.end(), blank) == eligible.end())
      blank = eligible[rng.below(eligible.size())];
    std::vector<int> blanks = {blank};
    for (int p : eligible)
      if (p != blank && rare_type(type_at(plan, slots[static_cast<std::size_t>(p)])))
        blanks.push_back(p);
    for (int b : blanks) {
      BlankQuestion q;
      if (draw_question(rng, plan, index, outfits, all, false, o, b, false, q))
        questions.push_back(q);
    }
  }
  return questions;
}

// Han's questions: one per outfit, the blank uniform, wrong answers of any type, answer 0 right.
std::vector<BlankQuestion> draw_maryland_questions(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                   const std::vector<std::int64_t>& outfits) {
  const int max_items = plan.maryland_max_items;
  const TypeIndex index(plan, outfits, max_items);
  std::vector<BlankQuestion> questions;
  if (outfits.size() < 4) return questions;
  for (std::int64_t o : outfits) {
    const std::size_t n = slots_of(plan, o, max_items).size();
    BlankQuestion q;
    if (draw_question(rng, plan, index, outfits, max_items, true, o, static_cast<int>(rng.below(n)),
                      true, q))
      questions.push_back(q);
  }
  return questions;
}

std::int64_t share(std::int64_t n, double fraction) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(n) * fraction));
}

}  // namespace

const char* item_type_name(ItemType type) {
  switch (type) {
    case ItemType::Accessories:
      return "accessories";
    case ItemType::AllBody:
      return "all-body";
    case ItemType::Bags:
      return "bags";
    case ItemType::Bottoms:
      return "bottoms";
    case ItemType::Hats:
      return "hats";
    case ItemType::Jewellery:
      return "jewellery";
    case ItemType::Outerwear:
      return "outerwear";
    case ItemType::Scarves:
      return "scarves";
    case ItemType::Shoes:
      return "shoes";
    case ItemType::Sunglasses:
      return "sunglasses";
    case ItemType::Tops:
      return "tops";
  }
  return "";
}

const std::vector<FineCategory>& fine_categories() {
  using T = ItemType;
  using F = GarmentForm;
  // Fashion-MNIST classes: 0 t-shirt/top, 1 trouser, 2 pullover, 3 dress, 4 coat, 5 sandal,
  // 6 shirt, 7 sneaker, 8 bag, 9 ankle boot. No two categories share a (class, form).
  static const std::vector<FineCategory> categories = {
      {1, "t-shirt", T::Tops, 0, F::Full},
      {2, "pullover", T::Tops, 2, F::Full},
      {3, "shirt", T::Tops, 6, F::Full},
      {4, "tank top", T::Tops, 0, F::Narrow},
      {5, "trousers", T::Bottoms, 1, F::Full},
      {6, "shorts", T::Bottoms, 1, F::Wide},
      {7, "skirt", T::Bottoms, 3, F::Wide},
      {8, "dress", T::AllBody, 3, F::Full},
      {9, "gown", T::AllBody, 3, F::Narrow},
      {10, "shirt dress", T::AllBody, 6, F::Narrow},
      {11, "coat", T::Outerwear, 4, F::Full},
      {12, "jacket", T::Outerwear, 4, F::Wide},
      {13, "cardigan", T::Outerwear, 2, F::Narrow},
      {14, "sandals", T::Shoes, 5, F::Full},
      {15, "sneakers", T::Shoes, 7, F::Full},
      {16, "ankle boots", T::Shoes, 9, F::Full},
      {17, "handbag", T::Bags, 8, F::Full},
      {18, "clutch", T::Bags, 8, F::Wide},
      {19, "backpack", T::Bags, 8, F::Narrow},
      {20, "beanie", T::Hats, 8, F::Half},
      {21, "cap", T::Hats, 0, F::Half},
      {22, "earrings", T::Jewellery, 5, F::Pair},
      {23, "bracelets", T::Jewellery, 8, F::Pair},
      {24, "pendant", T::Jewellery, 5, F::Half},
      {25, "sunglasses", T::Sunglasses, 7, F::Pair},
      {26, "aviators", T::Sunglasses, 9, F::Pair},
      {27, "scarf", T::Scarves, 1, F::Narrow},
      {28, "shawl", T::Scarves, 4, F::Narrow},
      {29, "watch", T::Accessories, 7, F::Half},
      {30, "belt", T::Accessories, 1, F::Half},
      {31, "gloves", T::Accessories, 6, F::Pair},
  };
  return categories;
}

std::array<StyleAttribute, 2> expressed_attributes(ItemType type) {
  using A = StyleAttribute;
  switch (type) {
    case ItemType::Tops:
    case ItemType::AllBody:
    case ItemType::Hats:
    case ItemType::Sunglasses:
      return {A::Colour, A::Cut};
    case ItemType::Bottoms:
    case ItemType::Bags:
    case ItemType::Jewellery:
    case ItemType::Scarves:
      return {A::Colour, A::Texture};
    case ItemType::Outerwear:
    case ItemType::Shoes:
    case ItemType::Accessories:
      return {A::Texture, A::Cut};
  }
  return {A::Colour, A::Texture};
}

void reshape_garment(const std::uint8_t* g, GarmentForm form, std::uint8_t* out) {
  constexpr int n = kGarmentSize, h = kGarmentSize / 2;
  std::fill(out, out + n * n, std::uint8_t{0});
  // Mean of the source pixels (x0..x0+sx) × (y0..y0+sy), rounded.
  auto mean = [&](int x0, int y0, int sx, int sy) {
    int sum = 0;
    for (int y = y0; y < y0 + sy; ++y)
      for (int x = x0; x < x0 + sx; ++x)
        sum += g[y * n + x];
    const int count = sx * sy;
    return static_cast<std::uint8_t>((sum + count / 2) / count);
  };
  switch (form) {
    case GarmentForm::Full:
      std::copy(g, g + n * n, out);
      return;
    case GarmentForm::Half:
    case GarmentForm::Pair:
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < h; ++x) {
          const std::uint8_t v = mean(2 * x, 2 * y, 2, 2);
          if (form == GarmentForm::Half) {
            out[(y + h / 2) * n + x + h / 2] = v;
          } else {
            out[(y + h / 2) * n + x] = v;
            out[(y + h / 2) * n + x + h] = v;
          }
        }
      }
      return;
    case GarmentForm::Wide:
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < n; ++x)
          out[(y + h / 2) * n + x] = mean(x, 2 * y, 1, 2);
      return;
    case GarmentForm::Narrow:
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < h; ++x)
          out[y * n + x + h / 2] = mean(2 * x, y, 2, 1);
      return;
  }
}

double hidden_dissimilarity(const BenchmarkItem& a, const BenchmarkItem& b) {
  const auto ea = expressed_attributes(a.type), eb = expressed_attributes(b.type);
  int shared = 0, differing = 0;
  for (StyleAttribute x : ea) {
    if (x != eb[0] && x != eb[1]) continue;
    ++shared;
    if (attribute_of(a.factors, x) != attribute_of(b.factors, x)) ++differing;
  }
  return static_cast<double>(differing) / shared;
}

double hidden_outfit_score(const std::vector<const BenchmarkItem*>& items) {
  double sum = 0;
  int pairs = 0;
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::size_t j = i + 1; j < items.size(); ++j, ++pairs)
      sum += hidden_dissimilarity(*items[i], *items[j]);
  return pairs == 0 ? 0.0 : sum / pairs;
}

std::vector<double> text_feature(std::string_view key) {
  constexpr int kValuesPerWord = 8;
  std::vector<double> feature(kTextFeatureSize, 0.0);
  const auto word_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (std::size_t i = 0; i < key.size();) {
    if (!word_char(key[i])) {
      ++i;
      continue;
    }
    std::uint64_t hash = 0xcbf29ce484222325;  // FNV-1a, 64 bits
    for (; i < key.size() && word_char(key[i]); ++i)
      hash = (hash ^ static_cast<unsigned char>(key[i])) * 0x100000001b3;
    Rng rng(mix_seed(kTextFeatureSeed, hash));
    for (int v = 0; v < kValuesPerWord; ++v) {
      const auto at = static_cast<std::size_t>(rng.below(kTextFeatureSize));
      feature[at] += 2 * rng.uniform() - 1;
    }
  }
  double norm = 0;
  for (double x : feature)
    norm += x * x;
  if (norm > 0)
    for (double& x : feature)
      x /= std::sqrt(norm);
  return feature;
}

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
      write_text(item, mix_seed(mix_seed(seed, kTextStream), plan.items.size()));
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
