// Drawing triplets from per-image attribute values: the one rule every dataset plugin and
// `wscsl make-triplets` use. For a condition, the close image shares the anchor's value (a
// categorical attribute) or lies within `close_within` of it (a numeric one, as CSN did for heel
// height); the far image has another value (lies farther than `far_beyond`). Every draw comes from
// wscsl's own generator, so the same values, counts and seed give the same triplets everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/util/rng.hpp"

namespace wscsl {

struct TripletRule {
  bool numeric = false;       // false: same value vs. another value
  double close_within = 0.0;  // numeric: |close − anchor| <= close_within
  double far_beyond = 0.0;    // numeric: |far − anchor| > far_beyond (>= close_within)
};

// One triplet in wscsl's order (anchor, close, far) and its condition.
struct Triplet {
  std::int64_t anchor = 0;
  std::int64_t close = 0;
  std::int64_t far = 0;
  std::int64_t condition = 0;
};

// Whether an attribute value is known: NaN is unknown; a negative categorical index is too (the
// -1 of SplitData::factors).
bool attribute_known(double value, const TripletRule& rule);

// Appends `count` triplets of condition `condition` to `out`, drawing the anchor uniformly among
// the `members` whose `values` entry is known (values is indexed by image id), the close image
// uniformly among the other members satisfying the rule, the far image uniformly among those
// violating it. Throws DataError naming `name` when no triplet can satisfy the rule.
void draw_condition_triplets(const std::vector<double>& values,
                             const std::vector<std::int64_t>& members, const TripletRule& rule,
                             std::int64_t condition, const std::string& name, std::int64_t count,
                             Rng& rng, std::vector<Triplet>& out);

// One condition's attribute: its name (for messages), rule and the value of every image id.
struct AttributeColumn {
  std::string name;
  TripletRule rule;
  std::vector<double> values;
};

// Draws counts[k] triplets of each condition k in turn from one generator, among `members`; the
// result lists condition 0's triplets first. Shuffle it for a pooled list.
std::vector<Triplet> draw_triplets(const std::vector<AttributeColumn>& columns,
                                   const std::vector<std::int64_t>& members,
                                   const std::vector<std::int64_t>& counts, Rng& rng);

// Most triplets a split may hold (20 million: 480 MB as [T, 3] int64), the bound every dataset's
// triplet counts state.
inline constexpr std::int64_t kMaxTriplets = 20'000'000;

// `total` split over `parts` as equally as possible, the first `total % parts` getting one more.
std::vector<std::int64_t> equal_shares(std::int64_t total, std::int64_t parts);

// Triplets [T, 3] (anchor, close, far) and conditions [T] as int64 tensors.
std::pair<at::Tensor, at::Tensor> triplet_tensors(const std::vector<Triplet>& triplets);

}  // namespace wscsl
