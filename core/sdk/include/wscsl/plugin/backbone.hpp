// Backbone φ: images → one embedding per image.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"

namespace wscsl {

class Backbone : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::Backbone;
  ~Backbone() override;
  Kind kind() const noexcept final { return Kind::Backbone; }

  // float [B, C, H, W] → float [B, D] with D == embedding_dim(). Gradients flow.
  torch::Tensor embed(const torch::Tensor& images);
  virtual std::int64_t embedding_dim() const = 0;

 protected:
  virtual torch::Tensor forward_images(const torch::Tensor& images) = 0;
};

}  // namespace wscsl
