#include "wscsl/nn/scoring.hpp"

namespace wscsl::nn {

ComparisonScores expected_distances(torch::Tensor second, torch::Tensor third,
                                    torch::Tensor weights) {
  ComparisonScores s;
  s.fused_second = (weights * second).sum(1);
  if (third.defined()) s.fused_third = (weights * third).sum(1);
  s.second_distances = std::move(second);
  s.third_distances = std::move(third);
  s.weights = std::move(weights);
  return s;
}

ComparisonScores expected_distances(ConditionModule& module, const ComparedItems& items,
                                    torch::Tensor weights) {
  const torch::Tensor& first = items.first.psi;
  return expected_distances(
      module.distances(first, items.second.psi),
      items.third.psi.defined() ? module.distances(first, items.third.psi) : torch::Tensor(),
      std::move(weights));
}

torch::Tensor condition_one_hot(const torch::Tensor& conditions, std::int64_t num_embeddings) {
  // Nothing is read back here, which on a GPU would make the step wait: the host checks the
  // conditions where it holds them, every split before training (no triplet without one).
  return torch::one_hot(conditions.to(torch::kLong), num_embeddings).to(torch::kFloat);
}

ComparisonScores conditioned_distances(ConditionModule& module, const ItemBlocks& items,
                                       const Comparisons& comparisons) {
  return expected_distances(module, gather(items, comparisons),
                            condition_one_hot(comparisons.conditions, module.num_embeddings()));
}

}  // namespace wscsl::nn
