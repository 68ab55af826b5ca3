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

struct LossInput {
  const TripletInput& triplets;
  const TripletScores& scores;
  // The reversed triplets' scores, computed without gradient; set only when needs_reversed().
  const TripletScores* reversed = nullptr;
};

class Loss : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::Loss;
  ~Loss() override;
  Kind kind() const noexcept final { return Kind::Loss; }

  // Named scalar terms, e.g. {"margin": 0.13}. Every term must be a finite scalar.
  std::map<std::string, torch::Tensor> compute(const LossInput& input);
  virtual bool needs_reversed() const { return false; }

 protected:
  virtual std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) = 0;
};

}  // namespace wscsl
