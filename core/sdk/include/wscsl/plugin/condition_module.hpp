// Condition module: φ → one embedding ψ_k per condition for each image, and, for comparisons of
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

class ConditionModule : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::ConditionModule;
  ~ConditionModule() override;
  Kind kind() const noexcept final { return Kind::ConditionModule; }

  // Per image: φ [B, D] → ψ [B, K, E]. This is what retrieval and alignment use.
  torch::Tensor embed(const torch::Tensor& phi);
  // Per comparison, from the features of the items, computed once per item. Pairs are scored only
  // by a module whose contract provides Resource::PairScores.
  ComparisonScores score(const ItemFeatures& items, const Comparisons& comparisons);
  // d_k(a, b) for every embedding k: ψ_a, ψ_b [B, K, E] → [B, K].
  torch::Tensor distances(const torch::Tensor& psi_a, const torch::Tensor& psi_b);

  virtual std::int64_t num_embeddings() const = 0;  // K
  virtual std::int64_t output_dim() const = 0;      // E
  // A Conditioned module also declares Need{Resource::TripletConditions} in its contract.
  virtual Supervision supervision() const { return Supervision::Weak; }

 protected:
  virtual torch::Tensor embed_impl(const torch::Tensor& phi) = 0;
  virtual ComparisonScores score_impl(const ItemFeatures& items,
                                      const Comparisons& comparisons) = 0;
  // Default: Euclidean distance over the last dimension, no epsilon.
  virtual torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b);
};

}  // namespace wscsl
