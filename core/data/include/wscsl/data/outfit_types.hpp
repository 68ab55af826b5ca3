// The conditions of an outfit dataset: one per unordered pair of coarse item types, as the
// type-aware network (Vasileva et al. 2018) learns one subspace per type pair.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/data/type_pairs_pickle.hpp"

namespace wscsl {

// The most coarse item types a dataset may name (Polyvore Outfits has 11): the [types × types]
// condition matrix is allocated only below it.
inline constexpr std::int64_t kMaxItemTypes = 1024;

struct TypeSpaces {
  std::vector<std::string> types;       // the coarse types, sorted
  std::vector<TypePair> conditions;     // condition k is the pair conditions[k]
  std::vector<std::int64_t> condition;  // [types × types], symmetric: the condition of a pair

  std::int64_t num_types() const { return static_cast<std::int64_t>(types.size()); }
  // The index of `type` in `types`, or -1.
  std::int64_t type_index(const std::string& type) const;
  std::int64_t pair_condition(std::int64_t a, std::int64_t b) const {
    return condition[static_cast<std::size_t>(a * num_types() + b)];
  }
  // "tops+bottoms": the name of condition k.
  std::string condition_name(std::size_t k) const;
  // [types, types] int64.
  at::Tensor matrix() const;
};

// The released typespaces.p: condition k is the k-th pair, looked up in either order. Every pair
// of the types it names (at most kMaxItemTypes) must be listed exactly once (in one order or the
// other).
TypeSpaces type_spaces_from_pairs(const std::vector<TypePair>& pairs,
                                  const std::filesystem::path& file);

// Every unordered pair of `types` (sorted, distinct), same-type pairs included: (t0, t0), (t0, t1),
// …, (t0, tn), (t1, t1), … — the 66 pairs of the 11 Polyvore types when generated for a layout
// that has no typespaces.p.
// At most kMaxItemTypes types (the caller's file bounds them).
TypeSpaces all_type_pairs(std::vector<std::string> types);

}  // namespace wscsl
