#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

ComparisonScores scores(std::vector<float> second, std::vector<float> third) {
  ComparisonScores s;
  s.fused_second = torch::tensor(second).requires_grad_(true);
  s.fused_third = torch::tensor(third).requires_grad_(true);
  return s;
}

}  // namespace

TEST(Margin, HandComputedHingeAndGradient) {
  auto loss = wscsl::testing::build<Loss>("margin", "margin = 0.2");
  const ItemBlocks items;  // the loss reads only the scores
  const Comparisons triplets;
  ComparisonScores s = scores({0.1f, 0.5f, 0.3f}, {0.4f, 0.5f, 0.2f});
  // max(0, 0.2 − 0.3) = 0, max(0, 0.2 − 0) = 0.2, max(0, 0.2 + 0.1) = 0.3 → mean 0.5/3.
  const auto terms = loss->compute({items, triplets, s});
  ASSERT_EQ(terms.size(), 1u);
  const torch::Tensor value = terms.at("margin");
  EXPECT_NEAR(value.item<double>(), 0.5 / 3, 1e-7);
  value.backward();
  const torch::Tensor expected_far = torch::tensor({0.0f, -1.0f / 3, -1.0f / 3});
  EXPECT_TRUE(torch::allclose(s.fused_third.grad(), expected_far));
  EXPECT_TRUE(torch::allclose(s.fused_second.grad(), -expected_far));
}

TEST(Margin, MatchesANaiveLoop) {
  auto loss = wscsl::testing::build<Loss>("margin", "margin = 0.7");
  const torch::Tensor close = torch::rand({50}), far = torch::rand({50});
  const ItemBlocks items;
  const Comparisons triplets;
  ComparisonScores s;
  s.fused_second = close;
  s.fused_third = far;
  double naive = 0;
  for (int i = 0; i < 50; ++i)
    naive += std::max(0.0, 0.7 - (far[i].item<double>() - close[i].item<double>()));
  EXPECT_NEAR(loss->compute({items, triplets, s}).at("margin").item<double>(), naive / 50, 1e-6);
}

TEST(Margin, RejectsANegativeMargin) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::Loss, "margin", "margin = -0.1");
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.all()[0].where.str(), "<test snippet>:1:10");
}
