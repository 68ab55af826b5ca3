// DiscoverNet's Transformer g (supplementary §4.2, the released code's "TM" concept branch):
// single-head self-attention over the pair tokens t_p ∈ R^{2D}. The queries are the tokens; the
// keys and values are the tokens listed twice (the released code concatenates the queries to
// the keys and values, which here are the same tokens). W_q, W_k, W_v: bias-free
// Linear(2D → 2D) with N(0, √(2/(4D))) weights; softmax(Q Kᵀ/√(2D)) with attention dropout 0.1;
// a bias-free Linear(2D → 2D) (Xavier-normal) → dropout 0.5 → + the token (residual); the sum
// over tokens → Linear(2D → D). The released code also defines a LayerNorm it never applies; so
// does nothing here.
#pragma once

#include <cstdint>

#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "triplet_summary.hpp"

namespace wscsl::discovernet {

class TransformerBranch final : public TripletSummary {
 public:
  static constexpr double kAttentionDropout = 0.1;
  static constexpr double kOutputDropout = 0.5;
  TransformerBranch(std::int64_t dim, std::int64_t pairs);
  torch::Tensor forward(const torch::Tensor& anchor, const torch::Tensor& close,
                        const torch::Tensor& far) override;

 private:
  std::int64_t pairs_;
  double temperature_;
  torch::nn::Linear query_{nullptr}, key_{nullptr}, value_{nullptr}, mix_{nullptr}, out_{nullptr};
  torch::nn::Dropout attention_dropout_{nullptr}, output_dropout_{nullptr};
};

}  // namespace wscsl::discovernet
