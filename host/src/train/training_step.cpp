#include "training_step.hpp"

#include <cmath>

namespace wscsl::host {

TripletBatch TripletBatch::to(torch::Device device) const {
  return {{images.anchor.to(device), images.close.to(device), images.far.to(device)},
          conditions.defined() ? conditions.to(device) : conditions,
          texts};
}

TrainingStep::TrainingStep(const Pipeline& pipeline, torch::optim::Optimizer& optimizer)
    : pipeline_(pipeline), optimizer_(optimizer) {}

double TrainingStep::take(const TripletBatch& batch, LossSharing& sharing) {
  TripletInput in = embed_triplets(
      batch.images, [&](const torch::Tensor& images) { return pipeline_.backbone->embed(images); },
      [&](const torch::Tensor& phi) { return pipeline_.condition_module->embed(phi); });
  in.conditions = batch.conditions;
  encode_texts(pipeline_, batch.texts, in);
  const torch::Tensor loss =
      weighted_loss(pipeline_, in, score_triplets(pipeline_, in), batch.images);
  optimizer_.zero_grad();
  sharing.before_backward(loss).backward();
  const double batch_loss = sharing.after_backward();
  if (std::isfinite(batch_loss)) optimizer_.step();
  return batch_loss;
}

}  // namespace wscsl::host
