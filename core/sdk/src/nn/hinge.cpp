#include "wscsl/nn/hinge.hpp"

namespace wscsl::nn {

torch::Tensor masked_hinge_mean(const torch::Tensor& close, const torch::Tensor& far, double margin,
                                const torch::Tensor& present) {
  const torch::Tensor kept = present.to(close.scalar_type());
  return (torch::relu(close - far + margin) * kept).sum() / kept.sum().clamp_min(1.0);
}

}  // namespace wscsl::nn
