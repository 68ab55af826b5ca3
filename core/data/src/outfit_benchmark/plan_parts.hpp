// What the units that draw the embedded outfit benchmark's plan share beyond outfit_benchmark.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "wscsl/data/outfit_benchmark.hpp"

namespace wscsl::data {

// Outfits hold 2 to kMaxOutfitSize items.
inline constexpr int kMinOutfitSize = 2;
inline constexpr int kMaxOutfitSize = 19;

// The value of style attribute `a` among an item's renderer factors.
int attribute_of(const SampleFactors& f, StyleAttribute a);

// The title, url_name and description of `item`, made of words of its own attributes so that
// text carries part of the style.
void write_item_text(BenchmarkItem& item, std::uint64_t seed);

// Compatibility lines: the outfits in order, then `negatives` lines, line k made from outfit
// k mod P by replacing every item (of its first `max_items`) with one from another outfit of the
// split, of the same type unless `any_type`.
std::vector<CompatibilityLine> draw_compatibility(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                  const std::vector<std::int64_t>& outfits,
                                                  int max_items, bool any_type,
                                                  std::size_t negatives);
// Polyvore questions: one per outfit, its blank uniform among the items whose type three other
// outfits of the split hold, plus one for every other scarves or accessories item.
std::vector<BlankQuestion> draw_polyvore_questions(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                   const std::vector<std::int64_t>& outfits);
// Han's questions: one per outfit, the blank uniform, wrong answers of any type, answer 0 right.
std::vector<BlankQuestion> draw_maryland_questions(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                   const std::vector<std::int64_t>& outfits);

}  // namespace wscsl::data
