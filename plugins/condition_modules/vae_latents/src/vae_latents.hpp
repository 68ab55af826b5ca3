// The latent means of a VAE encoder as embeddings: φ = [μ ; log σ²] (backbone/vae_encoder) and
// every latent dimension j is one embedding ψ_j = μ_j, so that the alignment evaluator finds which
// latent dimension captures which condition. A triplet is predicted with the Euclidean distance
// between whole mean vectors (the CBIR paper's h(x) = μ(x)).
#pragma once

#include <cstdint>

#include "wscsl/sdk.hpp"

namespace wscsl::vae_latents {

struct VaeLatentsOptions {
  std::int64_t input_dim = 0;  // D = 2L, from the backbone
};

class VaeLatents final : public ConditionModule {
 public:
  using Options = VaeLatentsOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit VaeLatents(const Options& options) : latent_(options.input_dim / 2) {}

  std::int64_t num_embeddings() const override { return latent_; }
  std::int64_t output_dim() const override { return 1; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;

 private:
  torch::Tensor means(const torch::Tensor& phi) const { return phi.narrow(1, 0, latent_); }
  std::int64_t latent_;
};

}  // namespace wscsl::vae_latents
