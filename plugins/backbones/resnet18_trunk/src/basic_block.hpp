// ResNet's basic block (He et al., 2016) as the reference trunk builds it: 3×3 conv (stride s) →
// BN → ReLU → 3×3 conv → BN → + shortcut → ReLU, with a 1×1 conv (stride s) + BN shortcut when the
// shape changes.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include "wscsl/nn/batch_norm.hpp"

namespace wscsl::resnet18_trunk {

class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  wscsl::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Sequential downsample_{nullptr};  // empty holder for an identity shortcut
};
TORCH_MODULE(BasicBlock);

}  // namespace wscsl::resnet18_trunk
