#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(Single, OneEmbeddingIsPhiComparedWithPairwiseDistance) {
  auto m = wscsl::testing::build<ConditionModule>("single", "", wscsl::testing::facts(4, 3));
  EXPECT_EQ(m->num_embeddings(), 1);
  EXPECT_EQ(m->output_dim(), 3);
  TripletInput in;
  in.phi_anchor = torch::tensor({{0.0f, 0.0f, 0.0f}});
  in.phi_close = torch::tensor({{1.0f, 2.0f, 2.0f}});
  in.phi_far = torch::tensor({{0.0f, 0.0f, 0.0f}});
  in.psi_anchor = m->embed(in.phi_anchor);
  in.psi_close = m->embed(in.phi_close);
  in.psi_far = m->embed(in.phi_far);
  EXPECT_TRUE(torch::equal(in.psi_close, in.phi_close.unsqueeze(1)));
  const TripletScores s = m->score(in);
  // ‖a − c + 1e-6‖ = ‖(−1, −2, −2) + 1e-6‖; identical images are 1e-6·√3 apart.
  const double close = std::sqrt(std::pow(1 - 1e-6, 2) + 2 * std::pow(2 - 1e-6, 2));
  EXPECT_NEAR(s.fused_close[0].item<double>(), close, 1e-6);
  EXPECT_NEAR(s.fused_far[0].item<double>(), std::sqrt(3.0) * 1e-6, 1e-9);
  EXPECT_TRUE(torch::equal(s.weights, torch::ones({1, 1})));
  EXPECT_TRUE(torch::equal(s.close_distances.squeeze(1), s.fused_close));
  EXPECT_EQ(m->supervision(), Supervision::Weak);
}
