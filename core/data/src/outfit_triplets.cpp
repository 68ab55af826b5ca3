#include "wscsl/data/outfit_triplets.hpp"

#include <algorithm>

#include <torch/types.h>

namespace wscsl {

OutfitTripletSampler::OutfitTripletSampler(const std::vector<std::vector<std::int64_t>>& outfits,
                                           const std::vector<std::int64_t>& item_types,
                                           const TypeSpaces& spaces)
    : item_types_(item_types),
      by_type_(static_cast<std::size_t>(spaces.num_types())),
      distinct_(static_cast<std::size_t>(spaces.num_types())) {
  const auto type_of = [&](std::int64_t id) {
    return static_cast<std::size_t>(item_types[static_cast<std::size_t>(id)]);
  };
  for (const std::vector<std::int64_t>& outfit : outfits) {
    std::vector<std::vector<std::int64_t>> of_type(by_type_.size());
    for (std::int64_t id : outfit) {
      of_type[type_of(id)].push_back(id);
      distinct_[type_of(id)].push_back(id);
    }
    for (std::size_t t = 0; t < of_type.size(); ++t)
      if (!of_type[t].empty()) by_type_[t].push_back(std::move(of_type[t]));
  }
  for (std::vector<std::int64_t>& items : distinct_) {
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
  }
  for (const std::vector<std::int64_t>& outfit : outfits)
    for (std::size_t j = 0; j < outfit.size(); ++j)
      for (std::size_t k = j + 1; k < outfit.size(); ++k) {
        if (distinct_[type_of(outfit[k])].size() < 2) continue;
        anchors_.push_back(outfit[j]);
        closes_.push_back(outfit[k]);
        conditions_.push_back(
            spaces.pair_condition(item_types[static_cast<std::size_t>(outfit[j])],
                                  item_types[static_cast<std::size_t>(outfit[k])]));
      }
}

std::int64_t OutfitTripletSampler::far_for(std::int64_t close, Rng& rng) const {
  const auto type = static_cast<std::size_t>(item_types_[static_cast<std::size_t>(close)]);
  const std::vector<std::vector<std::int64_t>>& outfits = by_type_[type];
  for (int attempt = 0; attempt < kOutfitNegativeTries; ++attempt) {
    const std::vector<std::int64_t>& items = outfits[rng.below(outfits.size())];
    const std::int64_t far = items[rng.below(items.size())];
    if (far != close) return far;
  }
  const std::vector<std::int64_t>& items = distinct_[type];
  const auto at =
      static_cast<std::size_t>(std::lower_bound(items.begin(), items.end(), close) - items.begin());
  auto pick = static_cast<std::size_t>(rng.below(items.size() - 1));
  if (pick >= at) ++pick;
  return items[pick];
}

at::Tensor OutfitTripletSampler::triplets(std::uint64_t seed) const {
  Rng rng(seed);
  at::Tensor out = torch::empty({size(), 3}, torch::kLong);
  std::int64_t* t = out.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < anchors_.size(); ++i) {
    t[3 * i] = anchors_[i];
    t[3 * i + 1] = closes_[i];
    t[3 * i + 2] = far_for(closes_[i], rng);
  }
  return out;
}

at::Tensor OutfitTripletSampler::conditions() const {
  return torch::tensor(conditions_, torch::kLong);
}

}  // namespace wscsl
