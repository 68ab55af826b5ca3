#include <cmath>

#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(Logistic, HandComputedSoftplusOfTheFusedDifference) {
  auto loss = wscsl::testing::build<Loss>("logistic", "margin = 0.5");
  const ItemBlocks items;  // the loss reads only the scores
  const Comparisons triplets;
  ComparisonScores s;
  s.fused_second = torch::tensor({1.0f, 0.0f}, torch::requires_grad());
  s.fused_third = torch::tensor({2.0f, 0.5f});
  // Diff = 1 and 0.5: log(1 + e^{−0.5}) and log(1 + e^0) = log 2.
  const double expected = 0.5 * (std::log1p(std::exp(-0.5)) + std::log(2.0));
  const torch::Tensor value = loss->compute({items, triplets, s}).at("logistic");
  EXPECT_NEAR(value.item<double>(), expected, 1e-6);
  value.backward();
  // d/d close of softplus(γ − far + close) = σ(γ − far + close) / B.
  const double g0 = 0.5 / (1.0 + std::exp(0.5)), g1 = 0.5 * 0.5;
  EXPECT_NEAR(s.fused_second.grad()[0].item<double>(), g0, 1e-6);
  EXPECT_NEAR(s.fused_second.grad()[1].item<double>(), g1, 1e-6);
}

TEST(Logistic, ExpectedLossMatchesANaiveLoop) {
  auto loss = wscsl::testing::build<Loss>("logistic", "margin = 0.3\nexpectation = \"loss\"");
  const ItemBlocks items;
  const Comparisons triplets;
  ComparisonScores s;
  s.second_distances = torch::rand({6, 4});
  s.third_distances = torch::rand({6, 4});
  s.weights = torch::softmax(torch::randn({6, 4}), 1);
  double naive = 0;
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 4; ++k) {
      const double diff =
          s.third_distances[i][k].item<double>() - s.second_distances[i][k].item<double>();
      naive += s.weights[i][k].item<double>() * std::log1p(std::exp(0.3 - diff));
    }
  EXPECT_NEAR(loss->compute({items, triplets, s}).at("logistic").item<double>(), naive / 6, 1e-6);
}
