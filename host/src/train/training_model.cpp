#include "training_model.hpp"

#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainerOptions& o,
                                                        std::vector<torch::Tensor> params) {
  switch (o.optimizer) {
    case OptimizerKind::Sgd:
      return std::make_unique<torch::optim::SGD>(
          params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
    case OptimizerKind::Adam:
      return std::make_unique<torch::optim::Adam>(
          params,
          torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).weight_decay(o.weight_decay));
  }
  throw Error("internal: unknown optimizer");
}

bool finite(const torch::Tensor& t) {
  return !t.defined() || torch::isfinite(t).all().item<bool>();
}

}  // namespace

TrainingModel::TrainingModel(const Pipeline& pipeline, torch::Device device)
    : device_(device), module_(pipeline.model()) {
  module_->to(device_);
  for (const auto& t : module_->named_parameters())
    if (t.value().requires_grad()) {
      parameters_.push_back(t.value());
      names_.push_back(t.key());
    }
  if (parameters_.empty()) throw Error("the pipeline has no trainable parameters");
  optimizer_ = make_optimizer(pipeline.trainer, parameters_);
}

void TrainingModel::set_lr(double lr) {
  for (auto& group : optimizer_->param_groups())
    group.options().set_lr(lr);
}

std::string TrainingModel::first_non_finite() const {
  for (const auto& p : module_->named_parameters())
    if (!finite(p.value())) return fmt::format("parameter '{}'", p.key());
  for (const auto& b : module_->named_buffers())
    if (!finite(b.value())) return fmt::format("buffer '{}'", b.key());
  for (const auto& [key, state] : optimizer_->state()) {
    (void)key;
    if (const auto* adam = dynamic_cast<const torch::optim::AdamParamState*>(state.get())) {
      if (!finite(adam->exp_avg()) || !finite(adam->exp_avg_sq()) ||
          !finite(adam->max_exp_avg_sq()))
        return "the optimiser's Adam moments";
    } else if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(state.get())) {
      if (!finite(sgd->momentum_buffer())) return "the optimiser's momentum";
    }
  }
  return {};
}

}  // namespace wscsl::host
