#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

std::shared_ptr<ConditionModule> make_csn_masks(const std::string& options, std::int64_t k = 4,
                                                std::int64_t d = 8) {
  return wscsl::testing::build<ConditionModule>("csn_masks", options, wscsl::testing::facts(k, d));
}

}  // namespace

TEST(CsnMasks, TheTripletsConditionSelectsItsMaskAsANaiveLoopDoes) {
  torch::manual_seed(0);
  for (const char* init : {"\"fixed\"", "\"learned\"", "\"prein\""}) {
    auto m = make_csn_masks(std::string("masks = ") + init);
    EXPECT_EQ(m->supervision(), Supervision::Conditioned);
    const torch::Tensor weight = parameter(*m, "masks.weight");
    const bool relu = std::string(init) != "\"fixed\"";
    const auto t = wscsl::testing::random_triplets(*m, 10, 8, true);
    const ComparisonScores s = m->score(t.items, t.comparisons);
    const ComparedItems in = gather(t.items, t.comparisons);
    for (std::int64_t i = 0; i < 10; ++i) {
      const std::int64_t c = t.comparisons.conditions[i].item<std::int64_t>();
      double close = 0, far = 0, l1 = 0;
      for (std::int64_t j = 0; j < 8; ++j) {
        double mask = weight[c][j].item<double>();
        if (relu) mask = std::max(0.0, mask);
        const double a = in.first.phi[i][j].item<double>() * mask;
        close += std::pow(a - in.second.phi[i][j].item<double>() * mask + 1e-6, 2);
        far += std::pow(a - in.third.phi[i][j].item<double>() * mask + 1e-6, 2);
        l1 += std::abs(mask);
      }
      EXPECT_NEAR(s.fused_second[i].item<double>(), std::sqrt(close), 1e-5) << init;
      EXPECT_NEAR(s.fused_third[i].item<double>(), std::sqrt(far), 1e-5) << init;
      EXPECT_NEAR(s.aux.at("mask_l1")[i].item<double>(), l1, 1e-5) << init;
      EXPECT_EQ(s.weights[i][c].item<float>(), 1.0f);
      EXPECT_EQ(s.weights[i].sum().item<float>(), 1.0f);
    }
  }
}

TEST(CsnMasks, FixedMasksAreDisjointBlocksThatNeverTrain) {
  auto m = make_csn_masks("masks = \"fixed\"", 4, 64);
  const torch::Tensor psi = m->embed(torch::ones({1, 64}));
  for (std::int64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(psi[0][k].sum().item<float>(), 16.0f);
    EXPECT_EQ(psi[0][k].narrow(0, 16 * k, 16).sum().item<float>(), 16.0f);
  }
  EXPECT_FALSE(parameter(*m, "masks.weight").requires_grad());
  auto learned = make_csn_masks("masks = \"learned\"");
  auto t = wscsl::testing::random_triplets(*learned, 6, 8, true);
  t.items.phi.requires_grad_(true);
  t.items.psi = learned->embed(t.items.phi);
  learned->score(t.items, t.comparisons).fused_third.sum().backward();
  EXPECT_GT(parameter(*learned, "masks.weight").grad().abs().sum().item<double>(), 0.0);
  const torch::Tensor anchors = t.comparisons.first;
  EXPECT_GT(t.items.phi.grad().index_select(0, anchors).abs().sum().item<double>(), 0.0);
}

// The outfit evaluators score a pair (u, v) exactly as they scored the triplet (u, v, v) before
// modules scored pairs: under the mask of the pair's condition.
TEST(CsnMasks, APairScoresAsTheTripletWhoseThirdItemIsTheSecond) {
  torch::manual_seed(1);
  auto m = make_csn_masks("masks = \"learned\"");
  EXPECT_EQ(
      wscsl::testing::pair_scores_contract(*m, wscsl::testing::random_triplets(*m, 10, 8, true)),
      "");
}

TEST(CsnMasks, TheNumberOfMasksIsTheDatasetsNumberOfConditions) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::ConditionModule, "csn_masks",
                                                         "num_conditions = 3\nmasks = \"random\"\n",
                                                         wscsl::testing::facts(4, 8));
  EXPECT_EQ(d.error_count(), 2u) << d.format();
  EXPECT_NE(d.format().find("num_conditions"), std::string::npos);
}
