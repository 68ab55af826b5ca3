// gated_explainer: K soft gates over φ, and triplet weights that favour the embedding which best
// explains the triplet.
//   ψ_k(x) = normalize(φ(x) ⊙ σ(G_k))            (G ∈ R^{K×D}, learned)
//   w_k(τ) = softmax_k(β · (d_k(a, f) − d_k(a, c)))
//   fused distances Σ_k w_k d_k
//   d_k(a, b) = ‖ψ_k(a) − ψ_k(b)‖₂, or 1 − cos(ψ_k(a), ψ_k(b)) with distance = "cosine"
#pragma once

#include <cstdint>

#include <wscsl/sdk.hpp>

namespace gated {

enum class Distance { Euclidean, Cosine };

struct GatedExplainerOptions {
  std::int64_t input_dim = 0;       // D, from the backbone
  std::int64_t num_embeddings = 0;  // K, from the dataset by default
  double sharpness = 10.0;          // β
  double gate_init_std = 1.0;       // G ~ N(0, gate_init_std²)
  Distance distance = Distance::Euclidean;
};

class GatedExplainer final : public wscsl::ConditionModule {
 public:
  using Options = GatedExplainerOptions;
  static wscsl::Schema<Options> schema();
  explicit GatedExplainer(const Options& options);

  std::int64_t num_embeddings() const override { return k_; }
  std::int64_t output_dim() const override { return d_; }

 protected:
  torch::Tensor embed_impl(const wscsl::EmbedInput& input) override;
  // Triplets only: the weights contrast a comparison's distances to its second and third items,
  // so a pair has no weights (the contract does not provide PairScores; the SDK refuses pairs).
  wscsl::ComparisonScores score_impl(const wscsl::ItemBlocks& items,
                                     const wscsl::Comparisons& comparisons) override;
  // ψ_a, ψ_b [B, K, E] → d_k [B, K]; distances() checks the shapes around it.
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  Options options_;
  std::int64_t d_, k_;
  torch::Tensor gates_;  // [K, D] logits of the gates
};

}  // namespace gated
