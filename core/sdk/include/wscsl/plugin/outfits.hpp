// Outfits (Polyvore Outfits, Maryland Polyvore): the coarse type of every item, and a split's two
// outfit tasks, compatibility lines and fill-in-the-blank questions. An outfit dataset's triplets
// are drawn from its outfits and conditioned on the type pair of anchor and close; these tensors
// are what the outfit evaluators read besides them.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace wscsl {

// Variable-length lists of image ids in one tensor: list i is items[offsets[i] .. offsets[i+1]).
struct IdLists {
  at::Tensor offsets;  // [L + 1] int64, offsets[0] = 0, non-decreasing
  at::Tensor items;    // [offsets[L]] int64 image ids

  std::int64_t size() const { return offsets.defined() ? offsets.size(0) - 1 : 0; }
};

// "Is this set of items a good outfit?" (compatibility AUC).
struct CompatibilityLines {
  IdLists outfits;    // the items of each line
  at::Tensor labels;  // [L] int64: 1 = compatible, 0 = not
};

// "Which candidate completes this outfit?" (fill-in-the-blank accuracy).
struct BlankQuestions {
  IdLists questions;           // the outfit's items other than the blank
  at::Tensor candidates;       // [Q, A] int64 image ids (A = 4 in both released benchmarks)
  at::Tensor answers;          // [Q] int64: the column of `candidates` that completes the outfit
  at::Tensor blank_positions;  // [Q] int64, 1-based: where the blank sits among the question items
};

struct OutfitData {
  // [N] int64 coarse type of every image (an index of DatasetInfo::item_types), -1 = unknown.
  at::Tensor item_types;
  // [types, types] int64, symmetric: the condition (an index of DatasetInfo::conditions) of a pair
  // of items by their two types, as the type-aware network and the released loader look it up.
  at::Tensor type_pair_conditions;
  CompatibilityLines compatibility;  // empty (no lines) when the split has none
  BlankQuestions blanks;             // empty (no questions) when the split has none
};

}  // namespace wscsl
