#include <gtest/gtest.h>

#include <cmath>

#include "wscsl/eval/outfit_scoring.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

std::shared_ptr<ConditionModule> make_type_aware(const std::string& options, std::int64_t k = 4,
                                                 std::int64_t d = 8) {
  return wscsl::testing::build<ConditionModule>("type_aware", options, wscsl::testing::facts(k, d));
}

// ψ_c(x) of one image and condition as the released code computes it, in double precision.
std::vector<double> masked(const torch::Tensor& phi, const torch::Tensor& weight, std::int64_t c,
                           bool relu, bool l2) {
  std::vector<double> v;
  double norm = 0;
  for (std::int64_t j = 0; j < phi.size(0); ++j) {
    double m = weight[c][j].item<double>();
    if (relu) m = std::max(0.0, m);
    v.push_back(phi[j].item<double>() * m);
    norm += v.back() * v.back();
  }
  if (l2)
    for (double& x : v)
      x /= std::sqrt(norm) + 1e-10;
  return v;
}

// F.pairwise_distance: ‖a − b + 1e-6‖.
double pairwise(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j)
    s += std::pow(a[j] - b[j] + 1e-6, 2);
  return std::sqrt(s);
}

}  // namespace

// Training: the triplet's condition selects its mask, ReLU'd; each masked embedding normalised.
TEST(TypeAware, TrainingSelectsTheRectifiedMaskOfTheConditionAsANaiveLoopDoes) {
  torch::manual_seed(0);
  for (const bool l2 : {true, false}) {
    auto m = make_type_aware(l2 ? "" : "l2_normalize = false");
    m->train();
    EXPECT_EQ(m->supervision(), Supervision::Conditioned);
    const torch::Tensor weight = parameter(*m, "masks.weight");
    ASSERT_TRUE((weight < 0).any().item<bool>());  // N(0.9, 0.7): the ReLU matters
    const auto t = wscsl::testing::random_triplets(*m, 10, 8, true);
    const ComparisonScores s = m->score(t.items, t.comparisons);
    const ComparedItems in = gather(t.items, t.comparisons);
    for (std::int64_t i = 0; i < 10; ++i) {
      const std::int64_t c = t.comparisons.conditions[i].item<std::int64_t>();
      const auto a = masked(in.first.phi[i], weight, c, true, l2);
      // float32 over 8 dimensions of values ~1: 1e-5 is two orders above the rounding.
      EXPECT_NEAR(s.fused_second[i].item<double>(),
                  pairwise(a, masked(in.second.phi[i], weight, c, true, l2)), 1e-5);
      EXPECT_NEAR(s.fused_third[i].item<double>(),
                  pairwise(a, masked(in.third.phi[i], weight, c, true, l2)), 1e-5);
      EXPECT_NEAR(s.aux.at("mask_l1")[i].item<double>(),
                  weight[c].clamp_min(0).sum().item<double>(), 1e-5);
      EXPECT_EQ(s.weights[i][c].item<float>(), 1.0f);
      EXPECT_EQ(s.weights[i].sum().item<float>(), 1.0f);
      for (std::int64_t j = 0; j < 8; ++j)
        EXPECT_NEAR(in.first.psi[i][c][j].item<double>(), a[static_cast<std::size_t>(j)], 1e-6);
    }
  }
}

// At test time the released code applies the masks without their ReLU (unless told otherwise).
TEST(TypeAware, EvaluationAppliesTheUnrectifiedMasksUnlessTold) {
  torch::manual_seed(1);
  const torch::Tensor phi = torch::randn({5, 8});
  for (const bool released : {true, false}) {
    auto m = make_type_aware(released ? "" : "test_masks = \"rectified\"");
    const torch::Tensor weight = parameter(*m, "masks.weight");
    m->eval();
    const torch::Tensor psi = m->embed(phi);
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t c = 0; c < 4; ++c) {
        const auto expected = masked(phi[i], weight, c, !released, true);
        for (std::int64_t j = 0; j < 8; ++j)
          EXPECT_NEAR(psi[i][c][j].item<double>(), expected[static_cast<std::size_t>(j)], 1e-6);
      }
    m->train();
    const auto trained = masked(phi[0], weight, 2, true, true);
    EXPECT_NEAR(m->embed(phi)[0][2][0].item<double>(), trained[0], 1e-6);
  }
}

// An outfit's pair (u, v) is scored with the mask of its type pair, in evaluation mode.
TEST(TypeAware, AnItemPairIsScoredUnderItsTypePairsMask) {
  torch::manual_seed(2);
  auto m = make_type_aware("", 3, 8);
  m->eval();
  const torch::Tensor weight = parameter(*m, "masks.weight");
  const torch::Tensor phi = torch::randn({4, 8});
  EmbeddingTable table = wscsl::testing::make_table(Split::Test, m->embed(phi).detach(), {}, {});
  table.items.phi = phi;
  OutfitData o;
  o.item_types = torch::tensor({0, 1, 1, 0}, torch::kLong);
  o.type_pair_conditions = torch::tensor({2, 0, 0, 1}, torch::kLong).reshape({2, 2});
  const outfit::PairScorer scorer(*m, table, o, 1, "test");
  outfit::ItemPairs pairs{torch::tensor({0, 1, 0}, torch::kLong),
                          torch::tensor({3, 2, 1}, torch::kLong), torch::zeros({3}, torch::kLong)};
  const torch::Tensor d = scorer.distances(pairs);
  const std::int64_t conditions[] = {2, 1, 0};  // types (0, 0), (1, 1), (0, 1)
  for (std::int64_t p = 0; p < 3; ++p) {
    const std::int64_t u = pairs.first[p].item<std::int64_t>();
    const std::int64_t v = pairs.second[p].item<std::int64_t>();
    EXPECT_NEAR(d[p].item<double>(),
                pairwise(masked(phi[u], weight, conditions[p], false, true),
                         masked(phi[v], weight, conditions[p], false, true)),
                1e-5);
  }
}

TEST(TypeAware, MasksAndEmbeddingsTrain) {
  auto m = make_type_aware("");
  m->train();
  auto t = wscsl::testing::random_triplets(*m, 6, 8, true);
  t.items.phi.requires_grad_(true);
  t.items.psi = m->embed(t.items.phi);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  (s.fused_third - s.fused_second + s.aux.at("mask_l1")).sum().backward();
  EXPECT_GT(parameter(*m, "masks.weight").grad().abs().sum().item<double>(), 0.0);
  const torch::Tensor anchors = t.comparisons.first;
  EXPECT_GT(t.items.phi.grad().index_select(0, anchors).abs().sum().item<double>(), 0.0);
}

// The outfit evaluators score a pair (u, v) exactly as they scored the triplet (u, v, v) before
// modules scored pairs.
TEST(TypeAware, APairScoresAsTheTripletWhoseThirdItemIsTheSecond) {
  torch::manual_seed(3);
  auto m = make_type_aware("");
  m->eval();
  EXPECT_EQ(
      wscsl::testing::pair_scores_contract(*m, wscsl::testing::random_triplets(*m, 10, 8, true)),
      "");
}

TEST(TypeAware, OneMaskPerTypePairAndItsContract) {
  EXPECT_EQ(make_type_aware("", 66, 64)->num_embeddings(), 66);
  const auto errors = [](const std::string& options) {
    return wscsl::testing::bind_diagnostics(Kind::ConditionModule, "type_aware", options,
                                            wscsl::testing::facts(4, 8))
        .format();
  };
  EXPECT_NE(errors("num_conditions = 3").find("'num_conditions' = 3 disagrees"), std::string::npos);
  // Fixed masks have no ReLU to leave out.
  EXPECT_NE(errors("masks = \"fixed\"\ntest_masks = \"rectified\"").find("'test_masks'"),
            std::string::npos);
  EXPECT_EQ(errors("masks = \"prein\"\ntest_masks = \"rectified\""), "");
  const auto module = make_type_aware("");
  const Contract& c = module->contract();
  EXPECT_TRUE(c.needs_resource(Resource::TripletConditions));
  EXPECT_TRUE(c.needs_resource(Resource::TypePairConditions));
  EXPECT_TRUE(c.provides_resource(Resource::AuxTerm, "mask_l1"));
  EXPECT_TRUE(c.provides_resource(Resource::PairScores, ""));
}
