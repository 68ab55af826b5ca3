#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

std::shared_ptr<ConditionModule> make(const std::string& options = "") {
  return wscsl::testing::build<ConditionModule>("lsn", options, wscsl::testing::facts(3, 6));
}

}  // namespace

TEST(Lsn, EmbeddingsAreNormalisedMaskedPhiAsANaiveLoopComputesThem) {
  torch::manual_seed(0);
  auto m = make("masks = \"learned\"");
  const torch::Tensor masks = torch::relu(parameter(*m, "masks.weight"));
  const torch::Tensor phi = torch::randn({4, 6});
  const torch::Tensor psi = m->embed(phi);
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t k = 0; k < 3; ++k) {
      const torch::Tensor v = phi[i] * masks[k];
      const double norm = std::max(v.norm().item<double>(), 1e-12);
      for (std::int64_t j = 0; j < 6; ++j)
        EXPECT_NEAR(psi[i][k][j].item<double>(), v[j].item<double>() / norm, 1e-6);
    }
}

TEST(Lsn, ATripletIsPredictedWithTheEmbeddingThatSatisfiesItBest) {
  torch::manual_seed(1);
  auto m = make();
  const TripletInput in = wscsl::testing::random_triplets(*m, 20, 6);
  const TripletScores s = m->score(in);
  for (std::int64_t i = 0; i < 20; ++i) {
    std::int64_t best = 0;
    for (std::int64_t k = 0; k < 3; ++k) {
      const double close = (in.psi_anchor[i][k] - in.psi_close[i][k] + 1e-6).norm().item<double>();
      EXPECT_NEAR(s.close_distances[i][k].item<double>(), close, 1e-6);
      const auto diff = [&](std::int64_t l) {
        return (s.far_distances[i][l] - s.close_distances[i][l]).item<double>();
      };
      if (diff(k) > diff(best)) best = k;
    }
    EXPECT_EQ(s.weights[i][best].item<float>(), 1.0f);
    EXPECT_EQ(s.fused_close[i].item<float>(), s.close_distances[i][best].item<float>());
    EXPECT_EQ(s.fused_far[i].item<float>(), s.far_distances[i][best].item<float>());
  }
}

TEST(Lsn, TheMarginLossOnItsPredictionIsThePerTripletMinimumLoss) {
  // min_k max(0, γ − Diff_k) = max(0, γ − max_k Diff_k): the margin loss on LSN's fused distances
  // is lsn_min's per-triplet form.
  torch::manual_seed(2);
  auto m = make();
  const TripletInput in = wscsl::testing::random_triplets(*m, 32, 6);
  const TripletScores s = m->score(in);
  auto margin = wscsl::testing::build<Loss>("margin", "margin = 0.3");
  auto triplet_min = wscsl::testing::build<Loss>("lsn_min", "margin = 0.3\nform = \"triplet\"");
  EXPECT_NEAR(margin->compute({in, s, nullptr}).at("margin").item<double>(),
              triplet_min->compute({in, s, nullptr}).at("lsn_min").item<double>(), 1e-6);
}
