#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(VaeLatents, EachLatentMeanIsOneEmbedding) {
  auto m = wscsl::testing::build<ConditionModule>("vae_latents", "", wscsl::testing::facts(4, 6));
  EXPECT_EQ(m->num_embeddings(), 3);
  EXPECT_EQ(m->output_dim(), 1);
  // φ = [μ ; log σ²]: the log-variances never reach the embeddings.
  TripletInput in;
  in.phi_anchor = torch::tensor({{0.0f, 0.0f, 0.0f, 5.0f, 5.0f, 5.0f}});
  in.phi_close = torch::tensor({{3.0f, 0.0f, 4.0f, -5.0f, 1.0f, 2.0f}});
  in.phi_far = torch::tensor({{1.0f, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f}});
  in.psi_anchor = m->embed(in.phi_anchor);
  in.psi_close = m->embed(in.phi_close);
  in.psi_far = m->embed(in.phi_far);
  EXPECT_TRUE(torch::equal(in.psi_close, torch::tensor({{{3.0f}, {0.0f}, {4.0f}}})));
  const TripletScores s = m->score(in);
  EXPECT_TRUE(torch::allclose(s.close_distances, torch::tensor({{3.0f, 0.0f, 4.0f}})));
  EXPECT_TRUE(torch::allclose(s.far_distances, torch::tensor({{1.0f, 1.0f, 0.0f}})));
  EXPECT_FLOAT_EQ(s.fused_close[0].item<float>(), 5.0f);  // ‖(3, 0, 4)‖
  EXPECT_FLOAT_EQ(s.fused_far[0].item<float>(), std::sqrt(2.0f));
  EXPECT_TRUE(torch::allclose(s.weights, torch::full({1, 3}, 1.0f / 3)));
}

TEST(VaeLatents, RejectsAnOddInputSize) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::ConditionModule, "vae_latents", "",
                                                         wscsl::testing::facts(4, 7));
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.format().find("must be even"), std::string::npos);
}
