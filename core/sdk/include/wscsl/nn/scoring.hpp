// Building ComparisonScores from per-embedding distances: the ways condition modules fuse them.
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "wscsl/plugin/condition_module.hpp"

namespace wscsl::nn {

// Expected distances under condition weights: fused = Σ_k w_k d_k (DiscoverNet's Eq. 6). With
// one-hot weights this selects one embedding's distances exactly.
// second, third, weights: [B, K]; `third` undefined for pairs.
ComparisonScores expected_distances(torch::Tensor second, torch::Tensor third,
                                    torch::Tensor weights);

// The same with the distances d_k(first, second) and d_k(first, third) (none for pairs) of the
// compared items under `module`'s distances.
ComparisonScores expected_distances(ConditionModule& module, const ComparedItems& items,
                                    torch::Tensor weights);

// The one-hot weights [B, K] of the comparisons' conditions [B] (supervised selection), read back
// from no device: each condition must lie in [0, K). The host gives a conditioned module no
// triplet without a condition (it checks every split before training); a condition outside
// [0, K) is LibTorch's to refuse.
torch::Tensor condition_one_hot(const torch::Tensor& conditions, std::int64_t num_embeddings);

// Supervised selection (Supervision::Conditioned): every comparison is scored by the embedding its
// condition names, i.e. expected_distances under condition_one_hot(comparisons.conditions, K) of
// `module`'s K embeddings.
ComparisonScores conditioned_distances(ConditionModule& module, const ItemBlocks& items,
                                       const Comparisons& comparisons);

}  // namespace wscsl::nn
