#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

std::shared_ptr<ConditionModule> make_lsn(const std::string& options = "") {
  return wscsl::testing::build<ConditionModule>("lsn", options, wscsl::testing::facts(3, 6));
}

}  // namespace

TEST(Lsn, EmbeddingsAreNormalisedMaskedPhiAsANaiveLoopComputesThem) {
  torch::manual_seed(0);
  auto m = make_lsn("masks = \"learned\"");
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
  auto m = make_lsn();
  const auto t = wscsl::testing::random_triplets(*m, 20, 6);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  const ComparedItems in = gather(t.items, t.comparisons);
  for (std::int64_t i = 0; i < 20; ++i) {
    std::int64_t best = 0;
    for (std::int64_t k = 0; k < 3; ++k) {
      const double close = (in.first.psi[i][k] - in.second.psi[i][k] + 1e-6).norm().item<double>();
      EXPECT_NEAR(s.second_distances[i][k].item<double>(), close, 1e-6);
      const auto diff = [&](std::int64_t l) {
        return (s.third_distances[i][l] - s.second_distances[i][l]).item<double>();
      };
      if (diff(k) > diff(best)) best = k;
    }
    EXPECT_EQ(s.weights[i][best].item<float>(), 1.0f);
    EXPECT_EQ(s.fused_second[i].item<float>(), s.second_distances[i][best].item<float>());
    EXPECT_EQ(s.fused_third[i].item<float>(), s.third_distances[i][best].item<float>());
  }
}

// Its prediction picks the embedding by the triplet's far item: a pair alone has no score.
TEST(Lsn, ScoresTripletsOnly) {
  auto m = make_lsn();
  EXPECT_FALSE(m->contract().provides_resource(Resource::PairScores, ""));
  const auto t = wscsl::testing::random_triplets(*m, 4, 6);
  const Comparisons& c = t.comparisons;
  EXPECT_THROW(m->score(t.items, Comparisons::pairs(c.first, c.second)), ComponentError);
}

TEST(Lsn, TheMarginLossOnItsPredictionIsThePerTripletMinimumLoss) {
  // min_k max(0, γ − Diff_k) = max(0, γ − max_k Diff_k): the margin loss on LSN's fused distances
  // is lsn_min's per-triplet form.
  torch::manual_seed(2);
  auto m = make_lsn();
  const auto t = wscsl::testing::random_triplets(*m, 32, 6);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  auto margin = wscsl::testing::build<Loss>("margin", "margin = 0.3");
  auto triplet_min = wscsl::testing::build<Loss>("lsn_min", "margin = 0.3\nform = \"triplet\"");
  EXPECT_NEAR(margin->compute({t.items, t.comparisons, s}).at("margin").item<double>(),
              triplet_min->compute({t.items, t.comparisons, s}).at("lsn_min").item<double>(), 1e-6);
}
