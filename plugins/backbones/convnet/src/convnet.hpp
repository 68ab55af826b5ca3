// A small convolutional backbone for 32-pixel inputs: stages of (3×3 conv → BN → ReLU) with 2×2
// max-pooling between stages, global average pooling, and a linear layer to the embedding. The
// last stage's map is its feature map.
#pragma once

#include <cstdint>

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/sdk.hpp"

namespace wscsl::convnet {

enum class Downsample { MaxPool, Stride };
enum class Pooling { Average, Flatten };
enum class Normalization { Batch, None };

struct ConvNetOptions {
  std::int64_t width = 32;           // channels of the first stage; doubled at every stage
  std::int64_t depth = 3;            // number of stages
  std::int64_t convs_per_stage = 1;  // 3×3 conv layers per stage
  std::int64_t embedding_dim = 64;   // D, the size of φ
  Downsample downsample = Downsample::MaxPool;
  Pooling pooling = Pooling::Average;
  Normalization normalization = Normalization::Batch;
  std::int64_t input_channels = 0;  // from the dataset
  std::int64_t input_height = 0;    // from the dataset
  std::int64_t input_width = 0;     // from the dataset
};

class ConvNet final : public Backbone {
 public:
  using Options = ConvNetOptions;
  static Schema<Options> schema();
  // Provides the last stage's feature map.
  static Contract contract_of(const Options& options);
  explicit ConvNet(const Options& options);

  std::int64_t embedding_dim() const override { return options_.embedding_dim; }
  std::int64_t feature_map_channels() const override;

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override;
  BackboneOutput forward_with_map(const torch::Tensor& images) override;

 private:
  bool flattens() const;
  Options options_;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace wscsl::convnet
