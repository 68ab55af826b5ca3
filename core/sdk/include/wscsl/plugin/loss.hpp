// Loss: the scores of a batch's comparisons → named scalar terms; the host sums them with the
// pipeline's weights.
#pragma once

#include <map>
#include <string>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"
#include "wscsl/plugin/condition_module.hpp"

namespace wscsl {

// What a loss reads: the batch's items, its comparisons (the training triplets) and their scores.
// The optional parts are given only to a loss whose contract needs them:
// Need{Resource::ReversedScores} and Need{Resource::TrainingImages}.
struct LossInput {
  const ItemBlocks& items;
  const Comparisons& comparisons;
  const ComparisonScores& scores;
  const ComparisonScores* reversed = nullptr;  // of comparisons.reversed(), without gradient
  const torch::Tensor* images = nullptr;       // [N, C, H, W] each item's image, while training
};

class Loss : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::Loss;
  ~Loss() override;
  Kind kind() const noexcept final { return Kind::Loss; }

  // Named scalar terms, e.g. {"margin": 0.13}. Every term must be a finite scalar.
  std::map<std::string, torch::Tensor> compute(const LossInput& input);

 protected:
  virtual std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) = 0;
};

}  // namespace wscsl
