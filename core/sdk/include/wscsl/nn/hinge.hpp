// Hinge terms on distances, reduced as the reference losses reduce them.
#pragma once

#include <torch/types.h>

namespace wscsl::nn {

// The type-aware network's masked hinge (Vasileva et al. 2018, the released selective margin
// loss): Σ_i p_i · max(0, close_i − far_i + margin) / max(Σ_i p_i, 1), a mean over the rows that
// `present` [B] (bool) keeps, zero when it keeps none. With every row present it is the batch
// mean of max(0, close − far + margin), PyTorch's MarginRankingLoss(far, close, +1).
// close, far: [B]. (The released code also clamps each hinge at 1e6; only a diverged run reaches
// that, and it is left out.)
torch::Tensor masked_hinge_mean(const torch::Tensor& close, const torch::Tensor& far, double margin,
                                const torch::Tensor& present);

}  // namespace wscsl::nn
