// Latent Similarity Networks (Nigam, Tokmakov, Ramanan, ICCV 2019) as DiscoverNet's released
// reimplementation builds them: K masked, L2-normalised embeddings ψ_k = normalize(φ ⊙ m_k),
// trained with the minimum over k of the triplet loss (loss/lsn_min). No official code exists.
#pragma once

#include <cstdint>

#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::lsn {

struct LsnOptions {
  std::int64_t input_dim = 0;       // D, from the backbone
  std::int64_t num_embeddings = 0;  // K, defaults to the dataset's conditions
  nn::MaskInit masks = nn::MaskInit::Learned;
};

class Lsn final : public ConditionModule {
 public:
  using Options = LsnOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Lsn(const Options& options);

  std::int64_t num_embeddings() const override { return masks_->count(); }
  std::int64_t output_dim() const override { return d_; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  std::int64_t d_;
  std::shared_ptr<nn::ConditionMasks> masks_;
};

}  // namespace wscsl::lsn
