// Distance and normalisation primitives as the reference implementations compute them. They differ
// in where an epsilon goes, which matters for matching the released code and for gradients at
// zero distance; each plugin picks the one its reference uses.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace wscsl::nn {

// PyTorch's F.pairwise_distance(a, b, p=2): ‖a − b + 1e-6‖₂ over the last dimension (the
// epsilon is added to the difference). CSN, SCE-Net and DiscoverNet's baselines use it.
torch::Tensor pairwise_distance(const torch::Tensor& a, const torch::Tensor& b);

// torch.norm(a − b, p=2) over the last dimension, without an epsilon (DiscoverNet's model).
torch::Tensor euclidean_distance(const torch::Tensor& a, const torch::Tensor& b);

// PyTorch's F.normalize(v, p=2, dim): v / max(‖v‖₂, 1e-12) (DiscoverNet and its baselines).
torch::Tensor normalize_clamped(const torch::Tensor& v, std::int64_t dim = -1);

// SCE-Net's normalisation: v / (‖v‖₂ + 1e-10).
torch::Tensor normalize_offset(const torch::Tensor& v, std::int64_t dim = -1);

}  // namespace wscsl::nn
