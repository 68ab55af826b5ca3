#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

using namespace wscsl;

TEST(Single, OneEmbeddingIsPhiComparedWithPairwiseDistance) {
  auto m = wscsl::testing::build<ConditionModule>("single", "", wscsl::testing::facts(4, 3));
  EXPECT_EQ(m->num_embeddings(), 1);
  EXPECT_EQ(m->output_dim(), 3);
  // One triplet: anchor, close, far.
  ItemFeatures items;
  items.phi = torch::tensor({{0.0f, 0.0f, 0.0f}, {1.0f, 2.0f, 2.0f}, {0.0f, 0.0f, 0.0f}});
  items.psi = m->embed(items.phi);
  EXPECT_TRUE(torch::equal(items.psi, items.phi.unsqueeze(1)));
  const ComparisonScores s = m->score(items, Comparisons::triplets_by_role(1, torch::kCPU));
  // ‖a − c + 1e-6‖ = ‖(−1, −2, −2) + 1e-6‖; identical images are 1e-6·√3 apart.
  const double close = std::sqrt(std::pow(1 - 1e-6, 2) + 2 * std::pow(2 - 1e-6, 2));
  EXPECT_NEAR(s.fused_second[0].item<double>(), close, 1e-6);
  EXPECT_NEAR(s.fused_third[0].item<double>(), std::sqrt(3.0) * 1e-6, 1e-9);
  EXPECT_TRUE(torch::equal(s.weights, torch::ones({1, 1})));
  EXPECT_TRUE(torch::equal(s.second_distances.squeeze(1), s.fused_second));
  EXPECT_EQ(m->supervision(), Supervision::Weak);
}

TEST(Single, ScoresAPairAsTheTripletWhoseThirdItemIsTheSecond) {
  auto m = wscsl::testing::build<ConditionModule>("single", "", wscsl::testing::facts(4, 3));
  EXPECT_EQ(wscsl::testing::pair_scores_contract(*m, wscsl::testing::random_triplets(*m, 5, 3)),
            "");
}
