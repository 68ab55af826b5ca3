// Conditional Similarity Networks (Veit, Belongie, Karaletsos, CVPR 2017): one mask m_c per
// condition over a shared embedding, ψ_c(x) = φ(x) ⊙ m_c, selected by the triplet's condition
// (supervised). Distances are F.pairwise_distance on the masked embeddings, as the released code.
#pragma once

#include <cstdint>

#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::csn_masks {

struct CsnMasksOptions {
  std::int64_t input_dim = 0;                // D, from the backbone
  std::int64_t num_conditions = 0;           // K, from the dataset
  nn::MaskInit masks = nn::MaskInit::Fixed;  // the released default (learned = False)
};

class CsnMasks final : public ConditionModule {
 public:
  using Options = CsnMasksOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit CsnMasks(const Options& options);

  std::int64_t num_embeddings() const override { return masks_->count(); }
  std::int64_t output_dim() const override { return d_; }
  Supervision supervision() const override { return Supervision::Conditioned; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  std::int64_t d_;
  std::shared_ptr<nn::ConditionMasks> masks_;
};

}  // namespace wscsl::csn_masks
