// The ResNet-18 trunk of the CSN, SCE-Net and DiscoverNet reference code: ResNet-18 without its
// layer4 ("the last downsampling layer removed"), a fixed 7×7 average pool over the 256-channel
// map of a 112-pixel image, and Linear(256 → D) with no normalisation after it. layer3's 7×7 map
// is its feature map.
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn/modules/linear.h>

#include "wscsl/nn/resnet.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::resnet18_trunk {

// What of the trunk's batch normalisation stays fixed while training, as the released code's
// --fix_BN (statistics) and --freeze_BN (all).
enum class FreezeBn { None, Statistics, All };

struct Resnet18TrunkOptions {
  std::int64_t embedding_dim = 64;
  std::string weights;  // a torchvision ResNet-18 state dict; empty: random initialisation
  FreezeBn freeze_bn = FreezeBn::None;
  std::int64_t input_channels = 0;  // from the dataset
  std::int64_t input_height = 0;    // from the dataset
  std::int64_t input_width = 0;     // from the dataset
};

// The side of layer3's output for an input side: conv1 and the max-pool halve it, layer2 and
// layer3 halve it again (each rounding up).
std::int64_t trunk_output_side(std::int64_t input_side);

class Resnet18Trunk final : public Backbone {
 public:
  using Options = Resnet18TrunkOptions;
  static Schema<Options> schema();
  // Provides layer3's map.
  static Contract contract_of(const Options& options);
  explicit Resnet18Trunk(const Options& options);

  std::int64_t embedding_dim() const override { return options_.embedding_dim; }
  std::int64_t feature_map_channels() const override { return trunk_.out_channels(); }
  // Batch normalisation stays in evaluation mode when its statistics are frozen.
  void train(bool on = true) override;

  // layer3's map of a 112-px image pooled to 256 features: φ before fc_embed.
  torch::Tensor features(const torch::Tensor& images);

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override;
  BackboneOutput forward_with_map(const torch::Tensor& images) override;

 private:
  torch::Tensor feature_map(const torch::Tensor& images);  // layer3's, checked to be 7×7

  Options options_;
  // Named as the reference's state-dict keys (conv1, bn1, layer1.0.conv1, ..., fc_embed).
  wscsl::nn::ResNetStages trunk_;
  torch::nn::Linear fc_embed_{nullptr};
};

}  // namespace wscsl::resnet18_trunk
