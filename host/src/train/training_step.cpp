#include "training_step.hpp"

#include <cmath>
#include <functional>

#include "autocast_scope.hpp"

namespace wscsl::host {

TripletBatch TripletBatch::with_each_tensor(
    const std::function<torch::Tensor(const torch::Tensor&)>& f) const {
  const auto apply = [&](const torch::Tensor& t) { return t.defined() ? f(t) : t; };
  return {{apply(images.anchor), apply(images.close), apply(images.far)}, apply(conditions), texts};
}

TripletBatch TripletBatch::to(torch::Device device) const {
  // To a GPU the copy is queued on the current stream and the host goes on; from pinned memory
  // (TrainingData pins for a GPU) it overlaps with the work queued before it.
  const bool non_blocking = device.is_cuda();
  return with_each_tensor(
      [&](const torch::Tensor& t) { return t.to(device, t.scalar_type(), non_blocking); });
}

TripletBatch TripletBatch::pinned() const {
  return with_each_tensor([](const torch::Tensor& t) { return t.pin_memory(); });
}

void zero_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params())
      if (p.grad().defined()) p.mutable_grad().zero_();
}

TrainingStep::TrainingStep(const Pipeline& pipeline, torch::optim::Optimizer& optimizer,
                           Precision precision)
    : pipeline_(pipeline), optimizer_(optimizer), precision_(precision) {}

PipelineLoss TrainingStep::forward(const TripletBatch& batch) const {
  const ForwardTriplets triplets = forward_triplets(
      pipeline_, batch.images, batch.texts, batch.conditions, pipeline_embedders(pipeline_));
  return weighted_loss(pipeline_, triplets, score_triplets(pipeline_, triplets), batch.images);
}

StepLosses TrainingStep::take(const TripletBatch& batch, LossSharing& sharing) {
  PipelineLoss loss;
  if (precision_ == Precision::Bf16Mixed) {
    {
      const AutocastScope autocast(batch.images.anchor.device().type());
      loss = forward(batch);
    }
    // The loss and its terms in float32, backward outside autocast, as PyTorch's AMP recipe.
    loss.total = loss.total.to(torch::kFloat);
    for (auto& [name, term] : loss.terms)
      term = term.to(torch::kFloat);
  } else {
    loss = forward(batch);
  }
  std::vector<torch::Tensor> terms;
  for (const auto& [name, term] : loss.terms)
    terms.push_back(term.detach());
  const torch::Tensor term_values = terms.empty()
                                        ? torch::zeros({0}, torch::kDouble)
                                        : torch::stack(terms).to(torch::kCPU, torch::kDouble);
  zero_gradients(optimizer_);
  sharing.before_backward(loss.total, term_values).backward();
  const BatchLoss shared = sharing.after_backward();
  if (std::isfinite(shared.loss)) optimizer_.step();
  StepLosses out{shared.loss, {}};
  for (std::size_t i = 0; i < loss.terms.size() && i < shared.terms.size(); ++i)
    out.terms.emplace_back(loss.terms[i].first, shared.terms[i]);
  return out;
}

}  // namespace wscsl::host
