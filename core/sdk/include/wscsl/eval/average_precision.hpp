// Average precision of ranked lists, the one definition the retrieval evaluators share.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace wscsl::eval {

// What the AP of a ranking without any relevant item is.
enum class WithoutRelevant {
  Zero,       // 0, as the ASEN releases' APScorer gives it (attribute_map)
  Undefined,  // NaN: no defined value (retrieval, which averages over the defined ones)
};

// The average precision of each ranking: `relevant` [Q, N] is 1 where the n-th ranked item is
// relevant to query q and 0 otherwise (any dtype); AP = Σ_{n ≤ k} δ_n · hits(n)/n divided by R,
// the relevant items of the whole list, with k = N when `cut` is 0 or above N. float64 [Q].
torch::Tensor average_precision(const torch::Tensor& relevant, std::int64_t cut,
                                WithoutRelevant none);

}  // namespace wscsl::eval
