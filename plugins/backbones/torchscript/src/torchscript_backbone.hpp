// A backbone written in Python: a TorchScript module (torch.jit.save) whose forward maps images
// [B, C, H, W] to φ [B, D], trained, checkpointed and evaluated as any wscsl backbone.
#pragma once

#include <cstdint>
#include <string>

#include <torch/csrc/jit/api/module.h>

#include "wscsl/sdk.hpp"

namespace wscsl::torchscript_backbone {

struct TorchScriptBackboneOptions {
  std::string file;
  bool trainable = true;
  std::int64_t input_channels = 0;  // from the dataset
  std::int64_t input_height = 0;    // from the dataset
  std::int64_t input_width = 0;     // from the dataset
};

class TorchScriptBackbone final : public Backbone {
 public:
  using Options = TorchScriptBackboneOptions;
  static Schema<Options> schema();
  explicit TorchScriptBackbone(const Options& options);

  std::int64_t embedding_dim() const override { return embedding_dim_; }
  void train(bool on = true) override;

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override;

 private:
  // D from a forward pass of two blank images in eval mode, checked against the module's
  // `embedding_dim` attribute when it has one.
  std::int64_t probe_embedding_dim(const Options& options);

  torch::jit::Module script_;
  std::int64_t embedding_dim_ = 0;
};

}  // namespace wscsl::torchscript_backbone
