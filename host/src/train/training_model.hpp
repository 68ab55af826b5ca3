// The pipeline's model as the trainer holds it: moved to the training device, then its trainable
// parameters given to a new optimiser, so that the optimiser's state is made beside them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include "pipeline/pipeline.hpp"

namespace wscsl::host {

class TrainingModel {
 public:
  // The model on `device`. Throws Error when it has no trainable parameter.
  TrainingModel(const Pipeline& pipeline, torch::Device device);

  torch::Device device() const { return device_; }
  torch::nn::Module& module() { return *module_; }
  // The trainable parameters, in the model's order, and their names.
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  const std::vector<std::string>& parameter_names() const { return names_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }

  void set_lr(double lr);
  // The name of the first parameter, buffer or optimiser state that is not finite, or empty.
  std::string first_non_finite() const;

 private:
  torch::Device device_;
  std::shared_ptr<torch::nn::Module> module_;
  std::vector<torch::Tensor> parameters_;
  std::vector<std::string> names_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace wscsl::host
