#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

std::shared_ptr<ConditionModule> make_specialized(const std::string& options = "") {
  return wscsl::testing::build<ConditionModule>("specialized", options,
                                                wscsl::testing::facts(3, 4));
}

}  // namespace

TEST(Specialized, EachConditionHasItsOwnLinearHead) {
  torch::manual_seed(0);
  auto m = make_specialized("embedding_dim = 2");
  EXPECT_EQ(m->num_embeddings(), 3);
  EXPECT_EQ(m->output_dim(), 2);
  const torch::Tensor w = parameter(*m, "heads.weight"), b = parameter(*m, "heads.bias");
  const torch::Tensor phi = torch::randn({5, 4});
  const torch::Tensor psi = m->embed(phi);
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t k = 0; k < 3; ++k)
      for (std::int64_t e = 0; e < 2; ++e) {
        double v = b[k * 2 + e].item<double>();
        for (std::int64_t j = 0; j < 4; ++j)
          v += w[k * 2 + e][j].item<double>() * phi[i][j].item<double>();
        EXPECT_NEAR(psi[i][k][e].item<double>(), v, 1e-5);
      }
}

TEST(Specialized, TheTripletsConditionSelectsTheHead) {
  torch::manual_seed(1);
  auto m = make_specialized();
  EXPECT_EQ(m->supervision(), Supervision::Conditioned);
  const auto t = wscsl::testing::random_triplets(*m, 12, 4, true);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  const ComparedItems in = gather(t.items, t.comparisons);
  for (std::int64_t i = 0; i < 12; ++i) {
    const std::int64_t c = t.comparisons.conditions[i].item<std::int64_t>();
    const double close = (in.first.psi[i][c] - in.second.psi[i][c] + 1e-6).norm().item<double>();
    const double far = (in.first.psi[i][c] - in.third.psi[i][c] + 1e-6).norm().item<double>();
    EXPECT_NEAR(s.fused_second[i].item<double>(), close, 1e-5);
    EXPECT_NEAR(s.fused_third[i].item<double>(), far, 1e-5);
    EXPECT_EQ(s.weights[i].sum().item<float>(), 1.0f);
    EXPECT_EQ(s.weights[i][c].item<float>(), 1.0f);
  }
  EXPECT_THROW(m->score(t.items, t.comparisons.without_conditions()), ComponentError);
  Comparisons unknown = t.comparisons;
  unknown.conditions = torch::full({12}, 3, torch::kLong);
  EXPECT_THROW(m->score(t.items, unknown), Error);
}

// The outfit evaluators score a pair (u, v) exactly as they scored the triplet (u, v, v) before
// modules scored pairs: with the head of the pair's condition.
TEST(Specialized, APairScoresAsTheTripletWhoseThirdItemIsTheSecond) {
  torch::manual_seed(2);
  auto m = make_specialized();
  EXPECT_EQ(
      wscsl::testing::pair_scores_contract(*m, wscsl::testing::random_triplets(*m, 12, 4, true)),
      "");
}

TEST(Specialized, OnlyTheSelectedHeadLearnsFromATriplet) {
  auto m = make_specialized();
  auto t = wscsl::testing::random_triplets(*m, 6, 4);
  t.comparisons.conditions = torch::full({6}, 1, torch::kLong);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  (s.fused_third - s.fused_second).sum().backward();
  const torch::Tensor grad = parameter(*m, "heads.weight").grad().view({3, 4, 4});
  EXPECT_EQ(grad[0].abs().sum().item<double>(), 0.0);
  EXPECT_GT(grad[1].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(grad[2].abs().sum().item<double>(), 0.0);
}
