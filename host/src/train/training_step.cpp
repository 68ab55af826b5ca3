#include "training_step.hpp"

#include <cmath>

#include "autocast_scope.hpp"

namespace wscsl::host {

TripletBatch TripletBatch::to(torch::Device device) const {
  // To a GPU the copy is queued on the current stream and the host goes on; from pinned memory
  // (TrainingData pins for a GPU) it overlaps with the work queued before it.
  const bool non_blocking = device.is_cuda();
  const auto moved = [&](const torch::Tensor& t) {
    return t.defined() ? t.to(device, t.scalar_type(), non_blocking) : t;
  };
  return {{moved(images.anchor), moved(images.close), moved(images.far)}, moved(conditions), texts};
}

TripletBatch TripletBatch::pinned() const {
  const auto pinned = [](const torch::Tensor& t) { return t.defined() ? t.pin_memory() : t; };
  return {{pinned(images.anchor), pinned(images.close), pinned(images.far)},
          pinned(conditions),
          texts};
}

TrainingStep::TrainingStep(const Pipeline& pipeline, torch::optim::Optimizer& optimizer)
    : pipeline_(pipeline), optimizer_(optimizer) {}

PipelineLoss TrainingStep::forward(const TripletBatch& batch) const {
  TripletInput in = embed_triplets(
      batch.images, [&](const torch::Tensor& images) { return pipeline_.backbone->embed(images); },
      [&](const torch::Tensor& phi) { return pipeline_.condition_module->embed(phi); });
  in.conditions = batch.conditions;
  encode_texts(pipeline_, batch.texts, in);
  return weighted_loss(pipeline_, in, score_triplets(pipeline_, in), batch.images);
}

StepLosses TrainingStep::take(const TripletBatch& batch, LossSharing& sharing) {
  PipelineLoss loss;
  if (pipeline_.trainer.precision == Precision::Bf16Mixed) {
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
  optimizer_.zero_grad();
  sharing.before_backward(loss.total, term_values).backward();
  const BatchLoss shared = sharing.after_backward();
  if (std::isfinite(shared.loss)) optimizer_.step();
  StepLosses out{shared.loss, {}};
  for (std::size_t i = 0; i < loss.terms.size() && i < shared.terms.size(); ++i)
    out.terms.emplace_back(loss.terms[i].first, shared.terms[i]);
  return out;
}

}  // namespace wscsl::host
