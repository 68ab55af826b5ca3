// Backbone φ: images → one embedding per image, and, for a backbone whose contract provides
// Resource::FeatureMap, the last feature map φ was pooled from.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"

namespace wscsl {

// φ of a batch of images, with the feature map it came from.
struct BackboneOutput {
  torch::Tensor phi;               // [B, D]
  torch::Tensor feature_map = {};  // [B, C, h, w] with C == feature_map_channels()
};

class Backbone : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::Backbone;
  ~Backbone() override;
  Kind kind() const noexcept final { return Kind::Backbone; }

  // float [B, C, H, W] → float [B, D] with D == embedding_dim(). Gradients flow.
  torch::Tensor embed(const torch::Tensor& images);
  // φ and the feature map, of a backbone whose contract provides Resource::FeatureMap.
  BackboneOutput embed_with_map(const torch::Tensor& images);
  virtual std::int64_t embedding_dim() const = 0;
  // C of the feature map, of a backbone whose contract provides Resource::FeatureMap; the host
  // establishes it as the fact backbone.feature_map_channels. The default breaks the contract.
  virtual std::int64_t feature_map_channels() const;

 protected:
  virtual torch::Tensor forward_images(const torch::Tensor& images) = 0;
  // The default breaks the contract: a backbone that provides the feature map overrides both.
  virtual BackboneOutput forward_with_map(const torch::Tensor& images);
};

}  // namespace wscsl
