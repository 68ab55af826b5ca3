// The ResNet-50 trunk of the attribute-specific retrieval papers (ASEN, ASEN++): torchvision's
// ResNet-50 up to layer3 as released (layer4 too on request), without its average pool and fc. The
// last layer's map is its feature map ([B, 1024, 14, 14] for 224-px images after layer3); φ is that
// map averaged over its positions.
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/nn/resnet.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::resnet50_trunk {

struct Resnet50TrunkOptions {
  std::int64_t last_layer = 3;  // 3: the released trunk (1024 channels); 4: layer4 too (2048)
  std::string weights;          // a torchvision ResNet-50 state dict; empty: random initialisation
  std::int64_t input_channels = 0;  // from the dataset
  std::int64_t input_height = 0;    // from the dataset
  std::int64_t input_width = 0;     // from the dataset
};

class Resnet50Trunk final : public Backbone {
 public:
  using Options = Resnet50TrunkOptions;
  static Schema<Options> schema();
  // Provides layer4's map.
  static Contract contract_of(const Options& options);
  explicit Resnet50Trunk(const Options& options);

  std::int64_t embedding_dim() const override { return trunk_.out_channels(); }
  std::int64_t feature_map_channels() const override { return trunk_.out_channels(); }

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override;
  BackboneOutput forward_with_map(const torch::Tensor& images) override;

 private:
  // Named as torchvision's state-dict keys (conv1, bn1, layer1.0.conv1, …, layer4.2.bn3).
  wscsl::nn::ResNetStages trunk_;
};

}  // namespace wscsl::resnet50_trunk
