#include "wscsl/testing/outfit_eval_fixtures.hpp"

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

FixedDataset three_type_outfit_dataset(std::int64_t images, std::optional<OutfitData> outfits) {
  SplitData split;
  split.num_images = images;
  split.triplets = torch::zeros({0, 3}, torch::kLong);
  split.outfits = std::move(outfits);
  return FixedDataset(three_type_outfit_info(), {{"test", split}});
}

torch::Tensor ConditionPicker::embed_impl(const torch::Tensor& phi) {
  return phi.reshape({phi.size(0), k_, e_});
}

TripletScores ConditionPicker::score_impl(const TripletInput& in) {
  TripletScores s;
  s.close_distances = distances(in.psi_anchor, in.psi_close);
  s.far_distances = distances(in.psi_anchor, in.psi_far);
  s.weights = torch::one_hot(in.conditions, k_).to(torch::kFloat);
  s.fused_close = (s.weights * s.close_distances).sum(1);
  s.fused_far = (s.weights * s.far_distances).sum(1);
  return s;
}

}  // namespace wscsl::testing
