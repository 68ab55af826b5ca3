// The loss sharing of one process alone, for the host tests that drive a TrainingStep directly.
#pragma once

#include <torch/types.h>

#include "train/training_step.hpp"

namespace wscsl::test {

// One process alone: the loss is differentiated as it is, and it is the batch's.
class UnsharedLoss : public host::LossSharing {
 public:
  torch::Tensor before_backward(const torch::Tensor& loss, const torch::Tensor& terms) override {
    shared_.loss = loss.item<double>();
    shared_.terms.assign(terms.data_ptr<double>(), terms.data_ptr<double>() + terms.numel());
    return loss;
  }
  host::BatchLoss after_backward() override { return shared_; }

 private:
  host::BatchLoss shared_;
};

}  // namespace wscsl::test
