// Condition module: φ (and, where its contract needs them, the backbone's feature map and the
// images) → one embedding ψ_k per condition for each image, and, for comparisons of
// items (pairs or triplets), per-condition distances, condition weights and the fused distances a
// loss or an evaluator acts on.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"
#include "wscsl/plugin/items.hpp"

namespace wscsl {

enum class Supervision {
  Weak,         // never sees the triplet's condition while training (WS-CSL)
  Conditioned,  // needs the condition label of every training triplet (CSN-style)
};

// What a condition module embeds a batch of images from. The host sets each field the module's
// contract needs and leaves the others undefined.
struct EmbedInput {
  torch::Tensor phi;               // [B, D]
  torch::Tensor feature_map = {};  // [B, C, h, w]: Resource::FeatureMap (Backbone::embed_with_map)
  torch::Tensor images = {};       // [B, channels, H, W]: Resource::ItemImages
};

class ConditionModule : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::ConditionModule;
  ~ConditionModule() override;
  Kind kind() const noexcept final { return Kind::ConditionModule; }

  // Per image: φ [B, D] (and what else the contract needs) → ψ [B, K, E]. This is what retrieval
  // and alignment use. The overload of φ alone is for a module that needs nothing else.
  torch::Tensor embed(const EmbedInput& input);
  torch::Tensor embed(const torch::Tensor& phi);
  // Per image, of a module whose contract provides Resource::AttentionMaps: where in the feature
  // map each embedding looks, [B, K, h, w], each map summing to 1 over its h·w positions.
  torch::Tensor attention_maps(const EmbedInput& input);
  // Per comparison, from the features of the items, computed once per item. Pairs are scored only
  // by a module whose contract provides Resource::PairScores. Checks what the host knows of the
  // comparisons (shapes, a declared role layout, rows it holds a host copy of) and reads nothing
  // back from a device.
  ComparisonScores score(const ItemBlocks& items, const Comparisons& comparisons);
  // d_k(a, b) for every embedding k: ψ_a, ψ_b [B, K, E] → [B, K].
  torch::Tensor distances(const torch::Tensor& psi_a, const torch::Tensor& psi_b);

  virtual std::int64_t num_embeddings() const = 0;  // K
  virtual std::int64_t output_dim() const = 0;      // E
  // A Conditioned module also declares Need{Resource::TripletConditions} in its contract.
  virtual Supervision supervision() const { return Supervision::Weak; }

 protected:
  virtual torch::Tensor embed_impl(const EmbedInput& input) = 0;
  // The default breaks the contract: a module that provides attention maps overrides it.
  virtual torch::Tensor attention_maps_impl(const EmbedInput& input);
  virtual ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) = 0;
  // Default: Euclidean distance over the last dimension, no epsilon.
  virtual torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b);
};

}  // namespace wscsl
