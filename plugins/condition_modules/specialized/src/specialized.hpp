// The "set of specialized triplet networks" baseline of CSN (Veit et al., CVPR 2017): one
// embedding head per condition, each trained only on its condition's triplets (supervised). The
// heads share the pipeline's backbone (the paper trains K complete networks).
#pragma once

#include <cstdint>

#include <torch/nn/modules/linear.h>

#include "wscsl/sdk.hpp"

namespace wscsl::specialized {

struct SpecializedOptions {
  std::int64_t input_dim = 0;       // D, from the backbone
  std::int64_t num_conditions = 0;  // K, from the dataset
  std::int64_t embedding_dim = 0;   // E, defaults to D
};

class Specialized final : public ConditionModule {
 public:
  using Options = SpecializedOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Specialized(const Options& options);

  std::int64_t num_embeddings() const override { return k_; }
  std::int64_t output_dim() const override { return e_; }
  Supervision supervision() const override { return Supervision::Conditioned; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  std::int64_t k_, e_;
  torch::nn::Linear heads_{nullptr};  // K heads Linear(D, E), stacked as one Linear(D, K·E)
};

}  // namespace wscsl::specialized
