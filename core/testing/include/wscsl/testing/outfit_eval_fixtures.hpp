// What the outfit evaluators' tests share: outfits of three item types (a, b, c) on hand-built
// embedding tables, and a conditioned module that scores a pair under its type-pair condition.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "wscsl/plugin/condition_module.hpp"
#include "wscsl/plugin/outfits.hpp"
#include "wscsl/testing/fixtures.hpp"

namespace wscsl::testing {

// Variable-length lists of image ids in IdLists form.
IdLists id_lists(const std::vector<std::vector<std::int64_t>>& lists);

// Three types and their six unordered pairs, conditions 0..5: a-a, a-b, a-c, b-b, b-c, c-c.
torch::Tensor three_type_pair_conditions();
DatasetInfo three_type_outfit_info();

// A test-split table of the images with the given ψ [M, K, E], without triplets.
EmbeddingTable outfit_table(const torch::Tensor& psi);

// A dataset of `images` images whose test split has the outfits `outfits` (and no triplets).
FixedDataset three_type_outfit_dataset(std::int64_t images, std::optional<OutfitData> outfits);

// Conditioned: ψ is φ reshaped to [K, E], and the distance of a pair is the Euclidean distance of
// its condition's embedding.
class ConditionPicker final : public ConditionModule {
 public:
  ConditionPicker(std::int64_t k, std::int64_t e);
  std::int64_t num_embeddings() const override { return k_; }
  std::int64_t output_dim() const override { return e_; }
  Supervision supervision() const override { return Supervision::Conditioned; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& c) override;

 private:
  std::int64_t k_, e_;
};

}  // namespace wscsl::testing
