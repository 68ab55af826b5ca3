// Training triplets drawn from outfits as the released Polyvore loader (Vasileva et al.,
// `TripletImageLoader`) draws them:
//
// * every unordered pair (j < k) of items of every outfit, in list order, is one triplet with
//   anchor j and close k (not mirrored; two items of one type make a pair too);
// * its far item is an item of the close item's type: an outfit drawn uniformly among the
//   outfits that hold that type (the anchor's own outfit included), then an item of that type in
//   it, drawn again while it is the close item itself, at most 100 times;
// * its condition is the type pair of anchor and close.
//
// Where the released loader gives up after 100 draws it keeps the close item as the far one, a
// triplet with no gradient; here the far item is then drawn uniformly among the type's other
// items. A pair whose close type has no other item at all cannot have a far item and is left
// out. Draws are a function of the seed only, so an epoch's triplets are reproducible.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/data/outfit_types.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl {

inline constexpr int kOutfitNegativeTries = 100;

class OutfitTripletSampler {
 public:
  // `outfits` are image ids; `item_types[id]` is the type of image id (an index of `spaces`).
  OutfitTripletSampler(const std::vector<std::vector<std::int64_t>>& outfits,
                       const std::vector<std::int64_t>& item_types, const TypeSpaces& spaces);

  std::int64_t size() const { return static_cast<std::int64_t>(anchors_.size()); }
  // [P, 3] int64 (anchor, close, far) with far items drawn from `seed`.
  at::Tensor triplets(std::uint64_t seed) const;
  // [P] int64: the condition of each pair.
  at::Tensor conditions() const;
  // A far item for `close` (an item of the outfits given), drawn from `rng`.
  std::int64_t far_for(std::int64_t close, Rng& rng) const;

 private:
  std::vector<std::int64_t> anchors_, closes_, conditions_;
  std::vector<std::int64_t> item_types_;
  // By type: the items of that type in each outfit holding it.
  std::vector<std::vector<std::vector<std::int64_t>>> by_type_;
  // By type: its distinct items, sorted.
  std::vector<std::vector<std::int64_t>> distinct_;
};

}  // namespace wscsl
