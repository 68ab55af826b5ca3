// DiscoverNet's set function g (Eq. 9): every pair of the triplet goes through the same MLP,
// the results are max-pooled over pairs, and a second MLP maps the pooled vector.
#pragma once

#include <cstdint>

#include <torch/nn/modules/container/sequential.h>

#include "triplet_summary.hpp"

namespace wscsl::discovernet {

class SetBranch final : public TripletSummary {
 public:
  // pairs = 2: {[φa‖φf], [φa‖φc]} is the same set for a triplet and its reversal;
  // pairs = 3: adds [φf‖φc] (the released code's third pair), which breaks that symmetry.
  SetBranch(std::int64_t dim, std::int64_t pairs);
  torch::Tensor forward(const torch::Tensor& anchor, const torch::Tensor& close,
                        const torch::Tensor& far) override;

 private:
  std::int64_t pairs_;
  torch::nn::Sequential pair_mlp_{nullptr};
  torch::nn::Sequential set_mlp_{nullptr};
};

}  // namespace wscsl::discovernet
