#include "set_branch.hpp"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

namespace wscsl::discovernet {

SetBranch::SetBranch(std::int64_t dim, std::int64_t pairs) : pairs_(pairs) {
  namespace nn = torch::nn;
  // Released code: Linear(2d→2d) → ReLU → Linear(2d→d) per pair; Linear(d→2d) → ReLU →
  // Linear(2d→d) after the max.
  pair_mlp_ = register_module("pair_mlp", nn::Sequential(nn::Linear(2 * dim, 2 * dim), nn::ReLU(),
                                                         nn::Linear(2 * dim, dim)));
  set_mlp_ = register_module(
      "set_mlp", nn::Sequential(nn::Linear(dim, 2 * dim), nn::ReLU(), nn::Linear(2 * dim, dim)));
}

torch::Tensor SetBranch::forward(const torch::Tensor& anchor, const torch::Tensor& close,
                                 const torch::Tensor& far) {
  const torch::Tensor h = pair_mlp_->forward(pair_tokens(anchor, close, far, pairs_));  // [B, P, d]
  return set_mlp_->forward(std::get<0>(h.max(1)));
}

}  // namespace wscsl::discovernet
