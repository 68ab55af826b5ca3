// DiscoverNet's triplet summary g: the backbone embeddings of a triplet (anchor, close, far) →
// one vector g(τ) ∈ R^D that the anchors are matched against. Three forms: the set function
// (set_branch), the bidirectional LSTM (sequential_branch) and single-head self-attention over
// the pairs (transformer_branch).
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/types.h>

namespace wscsl::discovernet {

class TripletSummary : public torch::nn::Module {
 public:
  // φ of anchor, close and far, each [B, D] → g(τ) [B, D].
  virtual torch::Tensor forward(const torch::Tensor& anchor, const torch::Tensor& close,
                                const torch::Tensor& far) = 0;
};

// The pair tokens of the released code, [B, P, 2D]: [φa‖φf], [φa‖φc] and, with pairs = 3,
// [φf‖φc] (the reference orders a triplet (anchor, far, close)). Two pairs are the same set for
// a triplet and its reversal; the third pair breaks that symmetry.
torch::Tensor pair_tokens(const torch::Tensor& anchor, const torch::Tensor& close,
                          const torch::Tensor& far, std::int64_t pairs);

}  // namespace wscsl::discovernet
