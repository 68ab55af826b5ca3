// The pipeline's model as the trainer holds it: moved to the training device, then its trainable
// parameters given to a new optimiser, so that the optimiser's state is made beside them. The
// optimiser holds the parameters of no [[trainer.parameter_groups]] in its first group, then one
// group for each of those that holds parameters, in their order.
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

  // Sets each group's learning rate to its rate at `epoch` under trainer.lr_schedule.
  void set_epoch(std::int64_t epoch);
  // The name of the first parameter, buffer or optimiser state that is not finite, or empty.
  std::string first_non_finite() const;

 private:
  TrainerOptions options_;
  torch::Device device_;
  std::shared_ptr<torch::nn::Module> module_;
  std::vector<torch::Tensor> parameters_;
  std::vector<std::string> names_;
  std::vector<double> initial_lrs_;  // of each group of the optimiser
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace wscsl::host
