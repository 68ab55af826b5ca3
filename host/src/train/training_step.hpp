// One optimisation step on a batch of triplets: forward through the pipeline's components, the
// weighted loss, backward and the optimiser's step. It knows nothing of processes, devices or
// checkpoints: its batch comes on the model's device, and data parallelism joins it through
// LossSharing (train/data_parallel.hpp).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "pipeline/item_forward.hpp"
#include "pipeline/pipeline.hpp"

namespace wscsl::host {

// The triplets of one step: their images by role and, for a module that trains with them, their
// conditions.
struct TripletBatch {
  TripletImages images;
  torch::Tensor conditions;  // [B] int64, or undefined
  TripletTexts texts;        // the fields the pipeline's text encoders read

  // The same batch with every tensor on `device`.
  TripletBatch to(torch::Device device) const;
  // The same batch in page-locked host memory, which a GPU copies from without the host waiting
  // (needs a CUDA LibTorch and a GPU).
  TripletBatch pinned() const;
  // The same batch with `f` applied to each of its defined tensors (the texts as they are).
  TripletBatch with_each_tensor(const std::function<torch::Tensor(const torch::Tensor&)>& f) const;
};

// The loss of a whole batch, and each of its terms (unweighted), in the order of
// PipelineLoss::terms.
struct BatchLoss {
  double loss = 0.0;
  std::vector<double> terms;
};

// How the processes that share a batch take part in its step, around backward.
class LossSharing {
 public:
  virtual ~LossSharing() = default;
  // Before backward, given this process's loss and its terms ([T] float64 on the CPU): the loss
  // to differentiate.
  virtual torch::Tensor before_backward(const torch::Tensor& loss, const torch::Tensor& terms) = 0;
  // After backward: the loss of the whole batch and its terms.
  virtual BatchLoss after_backward() = 0;
};

// What a step reports: the batch's loss and its terms named "<loss name>/<term>".
struct StepLosses {
  double total = 0.0;
  std::vector<std::pair<std::string, double>> terms;
};

// Zeroes the gradients of `optimizer`'s parameters in place, as LibTorch 1.13's
// Optimizer::zero_grad does (LibTorch 2's drops them instead). In place, they stay the views into
// the Reducer's buckets that data parallelism makes them (communicator.hpp), which neither
// version's zero_grad keeps: it detaches each gradient in place, which a view refuses.
void zero_gradients(torch::optim::Optimizer& optimizer);

class TrainingStep {
 public:
  // `optimizer` holds the trainable parameters of the pipeline's model; the forward runs in
  // `precision` (the job's, Strategy::precision).
  TrainingStep(const Pipeline& pipeline, torch::optim::Optimizer& optimizer, Precision precision);

  // One step on `batch`; returns the loss of the whole batch and its terms, as `sharing` reports
  // them. When the loss is not finite the optimiser does not step: the parameters stay as they
  // were, and the caller decides what follows.
  StepLosses take(const TripletBatch& batch, LossSharing& sharing);

 private:
  // The pipeline's weighted loss on `batch`, with the graph to differentiate.
  PipelineLoss forward(const TripletBatch& batch) const;

  const Pipeline& pipeline_;
  torch::optim::Optimizer& optimizer_;
  Precision precision_;
};

}  // namespace wscsl::host
