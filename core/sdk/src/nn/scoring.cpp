#include "wscsl/nn/scoring.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"

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
  // One read-back on the hot path (a wait for the GPU there); the bounds only for the message.
  if ((conditions.lt(0) | conditions.ge(num_embeddings)).any().item<bool>()) {
    const std::int64_t low = conditions.min().item<std::int64_t>();
    const std::int64_t high = conditions.max().item<std::int64_t>();
    throw Error(fmt::format(
        "triplet condition {} has no embedding: a supervised module has one per condition, "
        "[0, {})",
        low < 0 ? low : high, num_embeddings));
  }
  return torch::one_hot(conditions.to(torch::kLong), num_embeddings).to(torch::kFloat);
}

ComparisonScores conditioned_distances(ConditionModule& module, const ItemBlocks& items,
                                       const Comparisons& comparisons) {
  return expected_distances(module, gather(items, comparisons),
                            condition_one_hot(comparisons.conditions, module.num_embeddings()));
}

}  // namespace wscsl::nn
