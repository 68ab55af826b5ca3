// The standard triplet network: one embedding ψ_1 = φ for every condition, compared with
// F.pairwise_distance (CSN's first baseline; DiscoverNet's SimpleNet).
#pragma once

#include <cstdint>

#include "wscsl/sdk.hpp"

namespace wscsl::single {

struct SingleOptions {
  std::int64_t input_dim = 0;  // D, from the backbone
};

class Single final : public ConditionModule {
 public:
  using Options = SingleOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Single(const Options& options) : d_(options.input_dim) {}

  std::int64_t num_embeddings() const override { return 1; }
  std::int64_t output_dim() const override { return d_; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  std::int64_t d_;
};

}  // namespace wscsl::single
