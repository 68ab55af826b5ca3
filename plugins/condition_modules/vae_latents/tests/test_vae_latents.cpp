#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

using namespace wscsl;

TEST(VaeLatents, EachLatentMeanIsOneEmbedding) {
  auto m = wscsl::testing::build<ConditionModule>("vae_latents", "", wscsl::testing::facts(4, 6));
  EXPECT_EQ(m->num_embeddings(), 3);
  EXPECT_EQ(m->output_dim(), 1);
  // φ = [μ ; log σ²]: the log-variances never reach the embeddings.
  // One triplet: anchor, close, far.
  ItemFeatures items;
  items.phi = torch::tensor({{0.0f, 0.0f, 0.0f, 5.0f, 5.0f, 5.0f},
                             {3.0f, 0.0f, 4.0f, -5.0f, 1.0f, 2.0f},
                             {1.0f, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f}});
  items.psi = m->embed(items.phi);
  EXPECT_TRUE(torch::equal(items.psi[1], torch::tensor({{3.0f}, {0.0f}, {4.0f}})));
  const ComparisonScores s = m->score(items, Comparisons::triplets_by_role(1, torch::kCPU));
  EXPECT_TRUE(torch::allclose(s.second_distances, torch::tensor({{3.0f, 0.0f, 4.0f}})));
  EXPECT_TRUE(torch::allclose(s.third_distances, torch::tensor({{1.0f, 1.0f, 0.0f}})));
  EXPECT_FLOAT_EQ(s.fused_second[0].item<float>(), 5.0f);  // ‖(3, 0, 4)‖
  EXPECT_FLOAT_EQ(s.fused_third[0].item<float>(), std::sqrt(2.0f));
  EXPECT_TRUE(torch::allclose(s.weights, torch::full({1, 3}, 1.0f / 3)));
}

// The outfit evaluators score a pair (u, v) exactly as they scored the triplet (u, v, v) before
// modules scored pairs: ‖μ_u − μ_v‖₂.
TEST(VaeLatents, APairScoresAsTheTripletWhoseThirdItemIsTheSecond) {
  torch::manual_seed(0);
  auto m = wscsl::testing::build<ConditionModule>("vae_latents", "", wscsl::testing::facts(4, 6));
  EXPECT_EQ(wscsl::testing::pair_scores_contract(*m, wscsl::testing::random_triplets(*m, 8, 6)),
            "");
}

TEST(VaeLatents, RejectsAnOddInputSize) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::ConditionModule, "vae_latents", "",
                                                         wscsl::testing::facts(4, 7));
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.format().find("must be even"), std::string::npos);
}
