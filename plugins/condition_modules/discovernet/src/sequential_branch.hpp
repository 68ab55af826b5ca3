// DiscoverNet's sequential g (the released code's "BiLSTM" concept branch): a 3-layer
// bidirectional LSTM with hidden size D/2 reads the triplet as the sequence (anchor, far, close),
// its outputs are added to its inputs (a residual, hence 2·(D/2) = D), concatenated and mapped
// by a bias-free Linear(3D → D). The reading order makes g(τ) differ for a triplet and its
// reversal.
//
// The initial states are zero. The released code draws them from U[0, 1) afresh on every call,
// in evaluation too, which makes its predictions random; zero states keep ours deterministic.
#pragma once

#include <cstdint>

#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include "triplet_summary.hpp"

namespace wscsl::discovernet {

class SequentialBranch final : public TripletSummary {
 public:
  static constexpr std::int64_t kLayers = 3;
  explicit SequentialBranch(std::int64_t dim);  // dim must be even
  torch::Tensor forward(const torch::Tensor& anchor, const torch::Tensor& close,
                        const torch::Tensor& far) override;

 private:
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::Linear out_{nullptr};
};

}  // namespace wscsl::discovernet
