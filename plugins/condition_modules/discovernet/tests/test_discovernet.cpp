#include <gtest/gtest.h>

#include "../src/discovernet.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::discovernet::DiscoverNet;

namespace {

std::shared_ptr<DiscoverNet> make(const std::string& options, std::int64_t k = 4,
                                  std::int64_t d = 8) {
  return std::static_pointer_cast<DiscoverNet>(
      wscsl::testing::build<ConditionModule>("discovernet", options, wscsl::testing::facts(k, d)));
}

TripletInput random_triplets(DiscoverNet& m, std::int64_t b, std::int64_t d) {
  TripletInput in;
  in.phi_anchor = torch::randn({b, d});
  in.phi_close = torch::randn({b, d});
  in.phi_far = torch::randn({b, d});
  in.psi_anchor = m.embed(in.phi_anchor);
  in.psi_close = m.embed(in.phi_close);
  in.psi_far = m.embed(in.phi_far);
  return in;
}

torch::Tensor parameter(torch::nn::Module& m, const std::string& name) {
  for (const auto& p : m.named_parameters())
    if (p.key() == name) return p.value();
  throw std::runtime_error("no parameter " + name);
}

}  // namespace

TEST(DiscoverNet, TwoPairSetGivesATripletAndItsReversalTheSameWeights) {
  torch::manual_seed(0);
  auto m = make("pairs = 2");
  const TripletInput in = random_triplets(*m, 16, 8);
  const TripletScores s = m->score(in), r = m->score(in.reversed());
  EXPECT_TRUE(torch::equal(s.weights, r.weights));
  EXPECT_TRUE(torch::allclose(s.weights.sum(1), torch::ones({16})));
}

TEST(DiscoverNet, ThreePairSetDistinguishesTheReversal) {
  torch::manual_seed(0);
  auto m = make("pairs = 3");
  const TripletInput in = random_triplets(*m, 16, 8);
  const TripletScores s = m->score(in), r = m->score(in.reversed());
  EXPECT_GT((s.weights - r.weights).abs().max().item<double>(), 1e-4);
}

TEST(DiscoverNet, EmbeddingsAreNormalisedProjectionsAsANaiveLoopComputesThem) {
  torch::manual_seed(1);
  auto linear = make("projection = \"linear\"", 3, 5);
  auto residual = make("projection = \"residual\"", 3, 5);
  const torch::Tensor phi = torch::randn({4, 5});
  for (auto* m : {linear.get(), residual.get()}) {
    const torch::Tensor psi = m->embed(phi);
    ASSERT_EQ(psi.sizes(), (std::vector<std::int64_t>{4, 3, 5}));
    const torch::Tensor w = parameter(*m, "projection.weight");  // [K·E, D]
    for (std::int64_t i = 0; i < 4; ++i) {
      for (std::int64_t k = 0; k < 3; ++k) {
        torch::Tensor v = torch::zeros({5});
        for (std::int64_t e = 0; e < 5; ++e)
          for (std::int64_t j = 0; j < 5; ++j)
            v[e] += w[k * 5 + e][j] * phi[i][j];
        if (m == residual.get()) v += phi[i];
        v /= v.norm();
        EXPECT_TRUE(torch::allclose(psi[i][k], v, 1e-5, 1e-6)) << "image " << i << " k " << k;
      }
    }
  }
}

TEST(DiscoverNet, FusedDistancesAreTheExpectationOverConditionWeights) {
  torch::manual_seed(2);
  auto m = make("pairs = 3\ntemperature = 0.5", 4, 8);
  const TripletInput in = random_triplets(*m, 6, 8);
  const TripletScores s = m->score(in);
  // Naive: g from its parameters is opaque, but logits = g·normalize(a_k) and p = softmax(logits/τ)
  // must give weights whose expected distances are the fused ones.
  for (std::int64_t i = 0; i < 6; ++i) {
    double close = 0, far = 0;
    for (std::int64_t k = 0; k < 4; ++k) {
      const double dc = (in.psi_anchor[i][k] - in.psi_close[i][k]).norm().item<double>();
      const double df = (in.psi_anchor[i][k] - in.psi_far[i][k]).norm().item<double>();
      EXPECT_NEAR(s.close_distances[i][k].item<double>(), dc, 1e-5);
      EXPECT_NEAR(s.far_distances[i][k].item<double>(), df, 1e-5);
      close += s.weights[i][k].item<double>() * dc;
      far += s.weights[i][k].item<double>() * df;
    }
    EXPECT_NEAR(s.fused_close[i].item<double>(), close, 1e-5);
    EXPECT_NEAR(s.fused_far[i].item<double>(), far, 1e-5);
  }
}

TEST(DiscoverNet, WeightsAreASoftmaxOverAnchorSimilarities) {
  torch::manual_seed(3);
  auto anchor_normalized = make("pairs = 2\ntemperature = 2.0", 3, 6);
  const TripletInput in = random_triplets(*anchor_normalized, 5, 6);
  const torch::Tensor weights =
      anchor_normalized->condition_weights(in.phi_anchor, in.phi_close, in.phi_far);
  // Recover the logits up to a constant per row: log p_k − log p_0 = (s_k − s_0)/τ with
  // s_k = g · a_k/‖a_k‖; scaling all anchors by a constant must not change the weights.
  torch::Tensor anchors = parameter(*anchor_normalized, "anchors");
  {
    torch::NoGradGuard no_grad;
    anchors.mul_(3.0);
  }
  EXPECT_TRUE(
      torch::allclose(anchor_normalized->condition_weights(in.phi_anchor, in.phi_close, in.phi_far),
                      weights, 1e-5, 1e-6));
  // A larger temperature flattens the distribution.
  auto hot = make("pairs = 2\ntemperature = 100.0", 3, 6);
  const torch::Tensor flat = hot->condition_weights(in.phi_anchor, in.phi_close, in.phi_far);
  EXPECT_LT((flat - 1.0 / 3).abs().max().item<double>(), 0.05);
}

TEST(DiscoverNet, ReleasedCodeFreezesTheConditionBranchThePaperTrainsIt) {
  auto frozen = make("");
  auto trained = make("train_condition_branch = true");
  for (const auto& p : frozen->named_parameters()) {
    const bool branch = p.key().rfind("g.", 0) == 0 || p.key() == "anchors";
    EXPECT_EQ(p.value().requires_grad(), !branch) << p.key();
  }
  for (const auto& p : trained->named_parameters())
    EXPECT_TRUE(p.value().requires_grad()) << p.key();
  // The frozen branch still passes gradients through to φ.
  TripletInput in = random_triplets(*frozen, 4, 8);
  in.phi_anchor.requires_grad_(true);
  frozen->score(in).weights.select(1, 0).sum().backward();
  EXPECT_GT(in.phi_anchor.grad().abs().sum().item<double>(), 0.0);
}

TEST(DiscoverNet, OptionsAreValidated) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::ConditionModule, "discovernet",
      "pairs = 4\nprojection = \"residual\"\nembedding_dim = 3\ntemperature = 0\n",
      wscsl::testing::facts(4, 8));
  EXPECT_EQ(d.error_count(), 2u) << d.format();  // pairs and temperature; then the check is skipped
  const Diagnostics residual = wscsl::testing::bind_diagnostics(
      Kind::ConditionModule, "discovernet", "projection = \"residual\"\nembedding_dim = 3\n",
      wscsl::testing::facts(4, 8));
  ASSERT_EQ(residual.error_count(), 1u);
  EXPECT_NE(residual.format().find("must equal input_dim (8) for residual projections"),
            std::string::npos);
  auto k = make("num_embeddings = 6", 4, 8);
  EXPECT_EQ(k->num_embeddings(), 6);
}
