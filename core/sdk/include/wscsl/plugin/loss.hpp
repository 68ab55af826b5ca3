// Loss: a triplet batch's scores → named scalar terms; the host sums them with the pipeline's
// weights.
#pragma once

#include <map>
#include <string>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"
#include "wscsl/plugin/condition_module.hpp"

namespace wscsl {

// The images [B, C, H, W] of a training batch's triplets.
struct TripletImages {
  torch::Tensor anchor, close, far;
};

// What a loss reads. The optional parts are given only to a loss whose contract needs them:
// Need{Resource::ReversedScores} and Need{Resource::TrainingImages}.
struct LossInput {
  const TripletInput& triplets;
  const TripletScores& scores;
  const TripletScores* reversed = nullptr;  // the reversed triplets' scores, without gradient
  const TripletImages* images = nullptr;    // set only while training
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
