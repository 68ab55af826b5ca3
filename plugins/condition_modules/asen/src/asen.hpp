// ASEN, the attribute-specific embedding network (Ma et al., AAAI 2020), as the authors released it
// in two variants (ASENet and ASENet_V2): for each attribute k, attribute-aware spatial attention
// over the backbone's feature map, then attribute-aware channel attention, then a linear layer to
// the embedding, L2-normalised. ψ holds one embedding per attribute; a triplet is compared under
// its own attribute (supervised), by 1 − ψ_a·ψ_b, which ranks as the released dot product.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/nn/attribute_attention.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::asen {

enum class Variant {
  V1,  // ASENet: one-hot attributes, the learned 1×1 attention score
  V2,  // ASENet_V2: an attribute embedding, batch norm, the scaled dot-product score
};

struct AsenOptions {
  Variant variant = Variant::V2;
  std::int64_t num_conditions = 0;        // K, the dataset's attributes
  std::int64_t feature_map_channels = 0;  // C, from the backbone
  std::int64_t attribute_dim = 512;       // V2's attribute embedding
  std::int64_t common_dim = 512;          // d, where the map meets the attribute
  std::int64_t reduction = 2;             // the channel attention's C / hidden
  std::int64_t embedding_dim = 1024;      // E, the released dim_embed
};

class Asen final : public ConditionModule {
 public:
  using Options = AsenOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Asen(const Options& options);

  std::int64_t num_embeddings() const override { return options_.num_conditions; }
  std::int64_t output_dim() const override { return options_.embedding_dim; }
  Supervision supervision() const override { return Supervision::Conditioned; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  torch::Tensor attention_maps_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  Options options_;
  // V1: one-hot attributes through bias-free linear layers (their weights' columns), the learned
  // attention score, channel attention and the head.
  torch::nn::Linear spatial_table_{nullptr}, channel_table_{nullptr};
  nn::SpatialAttention spatial_{nullptr};
  nn::ChannelAttention channel_{nullptr};
  torch::nn::Linear head_{nullptr};
  // V2: an embedding and core's attention branch with batch norm (the layers it registers on this
  // module keep ASENet_V2's names: spatial_transform, channel_transform, spatial, channel, head).
  torch::nn::Embedding attributes_{nullptr};
  std::unique_ptr<nn::AttributeBranch> branch_;
};

}  // namespace wscsl::asen
