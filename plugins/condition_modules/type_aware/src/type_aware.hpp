// The type-aware embedding network (Vasileva et al., "Learning Type-Aware Embeddings for Fashion
// Compatibility", ECCV 2018): one learned mask per type-pair condition over the general embedding,
// ψ_c(x) = φ(x) ⊙ m_c, each masked embedding L2-normalised, the condition of a pair given by the
// types of its two items while training and at test time. As the released code
// (mvasil/fashion-compatibility, type_specific_network.py, run with --learned --l2_embed).
#pragma once

#include <cstdint>
#include <memory>

#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::type_aware {

// Which masks the evaluation applies: the released code's (the parameters without the ReLU that
// training applies) or the rectified ones training uses.
enum class TestMasks { Unrectified, Rectified };

struct TypeAwareOptions {
  std::int64_t input_dim = 0;                  // D, from the backbone
  std::int64_t num_conditions = 0;             // K, the dataset's type pairs
  nn::MaskInit masks = nn::MaskInit::Learned;  // --learned
  bool l2_normalize = true;                    // --l2_embed
  TestMasks test_masks = TestMasks::Unrectified;
};

class TypeAware final : public ConditionModule {
 public:
  using Options = TypeAwareOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit TypeAware(const Options& options);

  std::int64_t num_embeddings() const override { return masks_->count(); }
  std::int64_t output_dim() const override { return options_.input_dim; }
  Supervision supervision() const override { return Supervision::Conditioned; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  Options options_;
  std::shared_ptr<nn::ConditionMasks> masks_;
};

}  // namespace wscsl::type_aware
