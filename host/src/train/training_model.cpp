#include "training_model.hpp"

#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <utility>

#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

// The optimiser of `o` over `groups` of parameters, each with its initial learning rate.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    const TrainerOptions& o,
    const std::vector<std::pair<std::vector<torch::Tensor>, double>>& groups) {
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  switch (o.optimizer) {
    case OptimizerKind::Sgd: {
      const auto options = [&](double lr) {
        return torch::optim::SGDOptions(lr).momentum(o.momentum).weight_decay(o.weight_decay);
      };
      for (const auto& [params, lr] : groups)
        param_groups.emplace_back(params, std::make_unique<torch::optim::SGDOptions>(options(lr)));
      return std::make_unique<torch::optim::SGD>(std::move(param_groups), options(o.lr));
    }
    case OptimizerKind::Adam: {
      const auto options = [&](double lr) {
        return torch::optim::AdamOptions(lr).betas({o.beta1, o.beta2}).weight_decay(o.weight_decay);
      };
      for (const auto& [params, lr] : groups)
        param_groups.emplace_back(params, std::make_unique<torch::optim::AdamOptions>(options(lr)));
      return std::make_unique<torch::optim::Adam>(std::move(param_groups), options(o.lr));
    }
  }
  throw Error("internal: unknown optimizer");
}

bool finite(const torch::Tensor& t) {
  return !t.defined() || torch::isfinite(t).all().item<bool>();
}

}  // namespace

TrainingModel::TrainingModel(const Pipeline& pipeline, torch::Device device)
    : options_(pipeline.trainer), device_(device), module_(pipeline.model()) {
  module_->to(device_);
  for (const auto& t : module_->named_parameters())
    if (t.value().requires_grad()) {
      parameters_.push_back(t.value());
      names_.push_back(t.key());
    }
  if (parameters_.empty()) throw Error("the pipeline has no trainable parameters");
  // The parameters of no group first, then each group's (check_parameter_groups made them
  // disjoint and non-empty), in an optimiser group of their own where there are any.
  const std::vector<ParameterGroup>& groups = options_.parameter_groups;
  const std::vector<std::size_t> group_of = group_of_each(groups, names_);
  std::vector<std::pair<std::vector<torch::Tensor>, double>> split;
  const auto add = [&](std::size_t g, double lr) {
    std::vector<torch::Tensor> params;
    for (std::size_t i = 0; i < parameters_.size(); ++i)
      if (group_of[i] == g) params.push_back(parameters_[i]);
    if (params.empty()) return;
    split.emplace_back(std::move(params), lr);
    initial_lrs_.push_back(lr);
  };
  add(groups.size(), options_.lr);
  for (std::size_t g = 0; g < groups.size(); ++g)
    add(g, groups[g].lr);
  optimizer_ = make_optimizer(options_, split);
}

void TrainingModel::set_epoch(std::int64_t epoch) {
  auto& groups = optimizer_->param_groups();
  for (std::size_t g = 0; g < groups.size(); ++g)
    groups[g].options().set_lr(options_.lr_at(epoch, initial_lrs_[g]));
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
