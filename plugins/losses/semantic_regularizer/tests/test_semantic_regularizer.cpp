#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

ComparisonScores scored(std::vector<float> close, std::vector<float> far, torch::Tensor weights) {
  ComparisonScores s;
  s.fused_second = torch::tensor(close);
  s.fused_third = torch::tensor(far);
  s.weights = weights;
  return s;
}

}  // namespace

TEST(SemanticRegularizer, HistogramIntersectionOnlyWhereBothDirectionsAreSatisfied) {
  auto loss = wscsl::testing::build<Loss>("semantic_regularizer", "lambda = 1.0");
  EXPECT_TRUE(loss->contract().needs_resource(Resource::ReversedScores));
  const ItemBlocks items;  // the loss reads only the scores
  const Comparisons triplets;
  const torch::Tensor w =
      torch::tensor({{0.7f, 0.3f}, {0.5f, 0.5f}, {0.2f, 0.8f}}, torch::requires_grad());
  const torch::Tensor w_rev =
      torch::tensor({{0.4f, 0.6f}, {0.9f, 0.1f}, {0.6f, 0.4f}}, torch::requires_grad());
  // Triplet 0: both satisfied → Σ min = 0.4 + 0.3 = 0.7. Triplet 1: forward unsatisfied → 0.
  // Triplet 2: reversed unsatisfied → 0.
  const ComparisonScores s = scored({0.1f, 0.9f, 0.1f}, {0.5f, 0.2f, 0.5f}, w);
  const ComparisonScores r = scored({0.2f, 0.1f, 0.6f}, {0.3f, 0.4f, 0.3f}, w_rev);
  const torch::Tensor value = loss->compute({items, triplets, s, &r}).at("hik");
  EXPECT_NEAR(value.item<double>(), 0.7, 1e-6);
  value.backward();
  // The gradient reaches the forward weights where they are the minimum, never the reversed pass.
  EXPECT_TRUE(torch::allclose(w.grad(), torch::tensor({{0.0f, 1.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}})));
  EXPECT_FALSE(w_rev.grad().defined());
}

TEST(SemanticRegularizer, ZeroWhenEitherDirectionIsUnsatisfied) {
  auto loss = wscsl::testing::build<Loss>("semantic_regularizer", "lambda = 1.0");
  const ItemBlocks items;
  const Comparisons triplets;
  const torch::Tensor w = torch::full({2, 3}, 1.0f / 3);
  const ComparisonScores s = scored({0.1f, 0.5f}, {0.5f, 0.1f}, w);
  const ComparisonScores r = scored({0.5f, 0.1f}, {0.1f, 0.5f}, w);
  EXPECT_EQ(loss->compute({items, triplets, s, &r}).at("hik").item<double>(), 0.0);
}

TEST(SemanticRegularizer, MeanReductionAndLambda) {
  auto loss =
      wscsl::testing::build<Loss>("semantic_regularizer", "lambda = 0.5\nreduction = \"mean\"");
  const ItemBlocks items;
  const Comparisons triplets;
  const torch::Tensor w = torch::tensor({{1.0f, 0.0f}, {0.5f, 0.5f}});
  const ComparisonScores s = scored({0.1f, 0.1f}, {0.5f, 0.5f}, w);
  const ComparisonScores r = scored({0.1f, 0.1f}, {0.5f, 0.5f}, w);
  // HIK of a histogram with itself is 1 for both triplets: 0.5 · mean(1, 1).
  EXPECT_NEAR(loss->compute({items, triplets, s, &r}).at("hik").item<double>(), 0.5, 1e-6);
}
