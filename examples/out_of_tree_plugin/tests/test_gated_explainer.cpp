#include <gtest/gtest.h>

#include <wscsl/testing/fixtures.hpp>
#include <wscsl/testing/harness.hpp>

using namespace wscsl;

TEST(GatedExplainer, ClosedGatesGiveTheNormalisedBackboneEmbedding) {
  auto m = wscsl::testing::build<ConditionModule>("gated_explainer", "gate_init_std = 0.0",
                                                  wscsl::testing::facts(3, 5));
  const torch::Tensor phi = torch::randn({4, 5});
  const torch::Tensor psi = m->embed(phi);  // σ(0) = ½ on every dimension
  ASSERT_EQ(psi.sizes(), (std::vector<std::int64_t>{4, 3, 5}));
  for (std::int64_t k = 0; k < 3; ++k)
    EXPECT_TRUE(torch::allclose(psi.select(1, k), phi / phi.norm(2, {1}, true), 1e-5, 1e-6));
}

TEST(GatedExplainer, WeightsFavourTheEmbeddingThatExplainsTheTriplet) {
  auto m = wscsl::testing::build<ConditionModule>("gated_explainer", "sharpness = 5.0",
                                                  wscsl::testing::facts(2, 1));
  // Two embeddings on a line: the first says close is nearer (margin 2), the second the opposite.
  // Items 0, 1, 2 are the anchor, the close and the far item of one triplet.
  ItemFeatures items;
  items.phi = torch::zeros({3, 1});
  items.psi = torch::tensor({0.0f, 0.0f, 1.0f, 3.0f, 3.0f, 1.0f}).reshape({3, 2, 1});
  const ComparisonScores s = m->score(items, Comparisons::triplets_by_role(1, torch::kCPU));
  const double w0 = 1.0 / (1.0 + std::exp(-5.0 * 4.0));  // softmax of (5·2, 5·(−2))
  EXPECT_NEAR(s.weights[0][0].item<double>(), w0, 1e-6);
  EXPECT_NEAR(s.fused_second.item<double>(), w0 * 1 + (1 - w0) * 3, 1e-5);
  EXPECT_NEAR(s.fused_third.item<double>(), w0 * 3 + (1 - w0) * 1, 1e-5);
}

// The weights contrast a triplet's two distances: a pair alone has no weights to score it with.
TEST(GatedExplainer, ScoresTripletsOnly) {
  auto m =
      wscsl::testing::build<ConditionModule>("gated_explainer", "", wscsl::testing::facts(3, 5));
  EXPECT_FALSE(m->contract().provides_resource(Resource::PairScores, ""));
  const auto t = wscsl::testing::random_triplets(*m, 4, 5);
  const Comparisons& c = t.comparisons;
  EXPECT_EQ(m->score(t.items, c).fused_third.size(0), 4);
  EXPECT_THROW(m->score(t.items, Comparisons::pairs(c.first, c.second)), ComponentError);
}

TEST(GatedExplainer, CosineDistancesAreOneMinusTheCosineOfEachEmbedding) {
  auto m = wscsl::testing::build<ConditionModule>("gated_explainer", "distance = \"cosine\"",
                                                  wscsl::testing::facts(2, 2));
  // Embedding 0: orthogonal (d = 1); embedding 1: opposite (d = 2).
  const torch::Tensor a = torch::tensor({1.0f, 0.0f, 1.0f, 0.0f}).reshape({1, 2, 2});
  const torch::Tensor b = torch::tensor({0.0f, 3.0f, -2.0f, 0.0f}).reshape({1, 2, 2});
  const torch::Tensor d = m->distances(a, b);
  ASSERT_EQ(d.sizes(), (std::vector<std::int64_t>{1, 2}));
  EXPECT_NEAR(d[0][0].item<double>(), 1.0, 1e-6);
  EXPECT_NEAR(d[0][1].item<double>(), 2.0, 1e-6);
}
