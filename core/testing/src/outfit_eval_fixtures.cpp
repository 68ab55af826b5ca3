#include "wscsl/testing/outfit_eval_fixtures.hpp"

#include "wscsl/nn/scoring.hpp"

namespace wscsl::testing {

IdLists id_lists(const std::vector<std::vector<std::int64_t>>& lists) {
  std::vector<std::int64_t> offsets{0}, items;
  for (const auto& l : lists) {
    items.insert(items.end(), l.begin(), l.end());
    offsets.push_back(static_cast<std::int64_t>(items.size()));
  }
  return {torch::tensor(offsets, torch::kLong), torch::tensor(items, torch::kLong)};
}

torch::Tensor three_type_pair_conditions() {
  return torch::tensor({0, 1, 2, 1, 3, 4, 2, 4, 5}, torch::kLong).reshape({3, 3});
}

DatasetInfo three_type_outfit_info() {
  DatasetInfo info = dataset_info({"a-a", "a-b", "a-c", "b-b", "b-c", "c-c"});
  info.item_types = {"a", "b", "c"};
  return info;
}

EmbeddingTable outfit_table(const torch::Tensor& psi) {
  return make_table(Split::Test, psi, {}, {});
}

FixedDataset three_type_outfit_dataset(std::int64_t images, std::optional<OutfitData> outfits) {
  SplitData split;
  split.num_images = images;
  split.triplets = torch::zeros({0, 3}, torch::kLong);
  split.outfits = std::move(outfits);
  return FixedDataset(three_type_outfit_info(), {{Split::Test, split}});
}

torch::Tensor ConditionPicker::embed_impl(const EmbedInput& input) {
  const torch::Tensor& phi = input.phi;
  return phi.reshape({phi.size(0), k_, e_});
}

ConditionPicker::ConditionPicker(std::int64_t k, std::int64_t e) : k_(k), e_(e) {
  set_contract(pair_scoring());
}

ComparisonScores ConditionPicker::score_impl(const ItemBlocks& items, const Comparisons& c) {
  return nn::conditioned_distances(*this, items, c);
}

}  // namespace wscsl::testing
