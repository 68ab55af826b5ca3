// ResNet (He et al., 2016) as torchvision lays it out, with its parameter names, so that
// torchvision's state dicts load into the backbones built from it: the stem (conv1 → bn1 → ReLU →
// 3×3 max-pool), and stages of basic blocks (ResNet-18/34) or bottleneck blocks (ResNet-50/101/152,
// torchvision's "v1.5": the stride on the 3×3 convolution).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include "wscsl/nn/batch_norm.hpp"

namespace wscsl::nn {

enum class ResidualBlock { Basic, Bottleneck };

// The channels a block of `planes` puts out: `planes` for a basic block, 4·planes for a bottleneck.
std::int64_t block_out_channels(ResidualBlock block, std::int64_t planes);

// 3×3 conv (stride s) → BN → ReLU → 3×3 conv → BN → + shortcut → ReLU.
class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(std::int64_t in_channels, std::int64_t planes, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Sequential downsample_{nullptr};  // empty holder for an identity shortcut
};
TORCH_MODULE(BasicBlock);

// 1×1 conv → BN → ReLU → 3×3 conv (stride s) → BN → ReLU → 1×1 conv to 4·planes → BN → + shortcut
// → ReLU.
class BottleneckImpl : public torch::nn::Module {
 public:
  BottleneckImpl(std::int64_t in_channels, std::int64_t planes, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(Bottleneck);

// The stem and the first stages of a torchvision ResNet, registered on `owner` under torchvision's
// names (conv1, bn1, layer1.0.conv1, …): stage i holds blocks[i] blocks of 64·2^i planes, the first
// with stride 2 from the second stage on and a 1×1 conv + BN shortcut where the shape changes.
// Convolutions keep LibTorch's initialisation; he_initialise() gives torchvision's.
class ResNetStages {
 public:
  ResNetStages(torch::nn::Module& owner, ResidualBlock block,
               const std::vector<std::int64_t>& blocks, std::int64_t in_channels);
  // images [B, C, H, W] → the last stage's feature map [B, out_channels(), h, w].
  torch::Tensor forward(const torch::Tensor& images);
  std::int64_t out_channels() const { return out_channels_; }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  BatchNorm2d bn1_{nullptr};
  std::vector<torch::nn::Sequential> layers_;
  std::int64_t out_channels_ = 0;
};

// torchvision's initialisation of every convolution under `module`: He's normal over fan-out.
void he_initialise(torch::nn::Module& module);

// Loads a torchvision ResNet state dict into a trunk built with ResNetStages: the file's entries
// under an `ignored` prefix (the stages and the head the trunk leaves out) are skipped; the
// trunk's entries under an `optional` prefix (a head of its own) and every num_batches_tracked
// (absent from files before PyTorch 0.4.1) may be missing from the file and then keep their
// values. Anything else that does not fit throws DataError naming the file and every problem, and
// nothing is loaded.
void load_resnet_weights(torch::nn::Module& trunk, const std::string& file,
                         const std::vector<std::string>& ignored,
                         const std::vector<std::string>& optional);

// Every batch norm under `module`.
std::vector<BatchNorm2d> batch_norms(const torch::nn::Module& module);

}  // namespace wscsl::nn
