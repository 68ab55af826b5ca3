// What the datasets with per-image attributes (Celeb-A, image folders) share: the attribute of
// every image under each condition and the images of each split, from which triplets are drawn
// with the one rule of triplets.hpp and which `wscsl make-triplets` reads back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/triplets.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl {

struct LabelledImages {
  std::vector<AttributeColumn> columns;  // one per condition; values indexed by image id
  std::vector<std::vector<std::string>> value_names;   // per categorical condition, by value index
  std::map<Split, std::vector<std::int64_t>> members;  // split → its image ids, ascending

  std::int64_t num_images() const;

  // The conditions as DatasetInfo describes them: categorical ones with `value_names`, numeric
  // ones with their distinct values.
  std::vector<ConditionInfo> conditions() const;

  // [N, F] int64 factor labels: the categorical value index, or for a numeric condition the
  // index of the value among the condition's distinct values (ascending); -1 where unknown.
  at::Tensor factors() const;

  // The distinct known values of a numeric column, ascending, as text (ConditionInfo::values).
  std::vector<std::string> numeric_values(std::size_t column) const;

  // `total` triplets among `members` (the usable images of a split), spread equally over the
  // conditions (the first total % F get one more), drawn from a generator seeded with `seed`, then
  // shuffled together: the Celeb-A protocol of DiscoverNet ("equal number of triplets for each
  // attribute ... from the standard training, validation, and test split"). With the factors filled
  // in.
  SplitData draw_split(const std::vector<std::int64_t>& members, std::int64_t total,
                       std::uint64_t seed) const;

  // The split's attributes for `wscsl make-triplets`.
  SplitAttributes attributes(Split split, const ImageList& images) const;
};

}  // namespace wscsl
