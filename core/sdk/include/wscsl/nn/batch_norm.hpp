// Batch norm whose training statistics can span every process of a data-parallel job
// (synchronised batch norm, as PyTorch's SyncBatchNorm). Backbones use wscsl::nn::BatchNorm2d
// where they would use torch::nn::BatchNorm2d: it has the same parameters, buffers and state-dict
// names, computes exactly as LibTorch's batch norm until the host synchronises it
// (trainer.sync_batch_norm with several processes), and then normalises a training batch by the
// mean and variance of the whole batch of every process, forward and backward.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

namespace wscsl::nn {

// Sums a tensor over the processes of the job, in place; every process calls it in the same
// order with tensors of the same shape.
using ProcessSum = std::function<void(at::Tensor&)>;

// While one is alive, every wscsl::nn::BatchNorm2d in training mode takes its statistics over
// the processes that `sum` adds over. The host makes one for the training steps of a
// data-parallel run with trainer.sync_batch_norm = true.
class SynchronisedBatchNorm {
 public:
  explicit SynchronisedBatchNorm(ProcessSum sum);
  ~SynchronisedBatchNorm();
  SynchronisedBatchNorm(const SynchronisedBatchNorm&) = delete;
  SynchronisedBatchNorm& operator=(const SynchronisedBatchNorm&) = delete;
};

// Affine batch norm over the channels of [N, C, H, W] with running statistics (momentum 0.1,
// ε = 1e-5, as LibTorch's default BatchNorm2d, which it equals bit for bit unsynchronised).
class BatchNorm2dImpl : public torch::nn::Cloneable<BatchNorm2dImpl> {
 public:
  explicit BatchNorm2dImpl(std::int64_t num_features);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  at::Tensor forward(const at::Tensor& input);

  std::int64_t num_features;
  double eps = 1e-5;
  double momentum = 0.1;
  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};
TORCH_MODULE(BatchNorm2d);

}  // namespace wscsl::nn
