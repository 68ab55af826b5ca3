#include <gtest/gtest.h>

#include <cmath>

#include "../src/discovernet.hpp"
#include "../src/triplet_summary.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::discovernet::DiscoverNet;
using wscsl::testing::parameter;
using wscsl::testing::random_triplets;

namespace {

std::shared_ptr<DiscoverNet> make(const std::string& options, std::int64_t k = 4,
                                  std::int64_t d = 8) {
  return std::static_pointer_cast<DiscoverNet>(
      wscsl::testing::build<ConditionModule>("discovernet", options, wscsl::testing::facts(k, d)));
}

}  // namespace

TEST(DiscoverNet, TwoPairSetGivesATripletAndItsReversalTheSameWeights) {
  torch::manual_seed(0);
  auto m = make("pairs = 2");
  const auto t = random_triplets(*m, 16, 8);
  const ComparisonScores s = m->score(t.items, t.comparisons),
                         r = m->score(t.items, t.comparisons.reversed());
  EXPECT_TRUE(torch::equal(s.weights, r.weights));
  EXPECT_TRUE(torch::allclose(s.weights.sum(1), torch::ones({16})));
}

TEST(DiscoverNet, ThreePairSetDistinguishesTheReversal) {
  torch::manual_seed(0);
  auto m = make("pairs = 3");
  const auto t = random_triplets(*m, 16, 8);
  const ComparisonScores s = m->score(t.items, t.comparisons),
                         r = m->score(t.items, t.comparisons.reversed());
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
  const auto t = random_triplets(*m, 6, 8);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  const ComparedItems in = gather(t.items, t.comparisons);
  // Naive: g from its parameters is opaque, but logits = g·normalize(a_k) and p = softmax(logits/τ)
  // must give weights whose expected distances are the fused ones.
  for (std::int64_t i = 0; i < 6; ++i) {
    double close = 0, far = 0;
    for (std::int64_t k = 0; k < 4; ++k) {
      const double dc = (in.first.psi[i][k] - in.second.psi[i][k]).norm().item<double>();
      const double df = (in.first.psi[i][k] - in.third.psi[i][k]).norm().item<double>();
      EXPECT_NEAR(s.second_distances[i][k].item<double>(), dc, 1e-5);
      EXPECT_NEAR(s.third_distances[i][k].item<double>(), df, 1e-5);
      close += s.weights[i][k].item<double>() * dc;
      far += s.weights[i][k].item<double>() * df;
    }
    EXPECT_NEAR(s.fused_second[i].item<double>(), close, 1e-5);
    EXPECT_NEAR(s.fused_third[i].item<double>(), far, 1e-5);
  }
}

TEST(DiscoverNet, WeightsAreASoftmaxOverAnchorSimilarities) {
  torch::manual_seed(3);
  auto anchor_normalized = make("pairs = 2\ntemperature = 2.0", 3, 6);
  const auto t = random_triplets(*anchor_normalized, 5, 6);
  const ComparedItems in = gather(t.items, t.comparisons);
  const torch::Tensor weights =
      anchor_normalized->condition_weights(in.first.phi, in.second.phi, in.third.phi);
  // Recover the logits up to a constant per row: log p_k − log p_0 = (s_k − s_0)/τ with
  // s_k = g · a_k/‖a_k‖; scaling all anchors by a constant must not change the weights.
  torch::Tensor anchors = parameter(*anchor_normalized, "anchors");
  {
    torch::NoGradGuard no_grad;
    anchors.mul_(3.0);
  }
  EXPECT_TRUE(torch::allclose(
      anchor_normalized->condition_weights(in.first.phi, in.second.phi, in.third.phi), weights,
      1e-5, 1e-6));
  // A larger temperature flattens the distribution.
  auto hot = make("pairs = 2\ntemperature = 100.0", 3, 6);
  const torch::Tensor flat = hot->condition_weights(in.first.phi, in.second.phi, in.third.phi);
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
  auto t = random_triplets(*frozen, 4, 8);
  t.items.phi.requires_grad_(true);
  frozen->score(t.items, t.comparisons).weights.select(1, 0).sum().backward();
  const torch::Tensor anchors = t.comparisons.first;
  EXPECT_GT(t.items.phi.grad().index_select(0, anchors).abs().sum().item<double>(), 0.0);
}

// Every form of g summarises the three items of a triplet: a pair alone has no condition weights.
TEST(DiscoverNet, ScoresTripletsOnly) {
  for (const char* g : {"\"set\"", "\"sequential\"", "\"transformer\""}) {
    auto m = make(std::string("g = ") + g);
    EXPECT_FALSE(m->contract().provides_resource(Resource::PairScores, "")) << g;
    const auto t = random_triplets(*m, 4, 8);
    const Comparisons& c = t.comparisons;
    EXPECT_THROW(m->score(t.items, Comparisons::pairs(c.first, c.second)), ComponentError) << g;
  }
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

namespace {

// Sets every parameter of `m` whose name starts with `prefix` to `value`.
void fill_parameters(torch::nn::Module& m, const std::string& prefix, double value) {
  torch::NoGradGuard no_grad;
  for (const auto& p : m.named_parameters())
    if (p.key().rfind(prefix, 0) == 0) p.value().fill_(value);
}

// A Linear weight [D, blocks·D] that copies input block `block` to the output.
torch::Tensor block_selector(std::int64_t d, std::int64_t blocks, std::int64_t block) {
  torch::Tensor w = torch::zeros({d, blocks * d});
  w.narrow(1, block * d, d).copy_(torch::eye(d));
  return w;
}

}  // namespace

TEST(DiscoverNet,
     SequentialAndThreePairTransformerDistinguishTheReversalTwoPairTransformerDoesNot) {
  torch::manual_seed(4);
  for (const char* options : {"g = \"sequential\"", "g = \"transformer\"\npairs = 3"}) {
    auto m = make(options);
    m->eval();  // the transformer's dropout would make two passes differ anyway
    const auto t = random_triplets(*m, 16, 8);
    const ComparisonScores s = m->score(t.items, t.comparisons),
                           r = m->score(t.items, t.comparisons.reversed());
    EXPECT_GT((s.weights - r.weights).abs().max().item<double>(), 1e-4) << options;
  }
  auto set_like = make("g = \"transformer\"\npairs = 2");
  set_like->eval();
  const auto t = random_triplets(*set_like, 16, 8);
  EXPECT_TRUE(torch::allclose(set_like->score(t.items, t.comparisons).weights,
                              set_like->score(t.items, t.comparisons.reversed()).weights, 1e-6,
                              1e-7));
}

TEST(DiscoverNet, SequentialGReadsAnchorFarCloseWithAResidualAndZeroInitialStates) {
  // With every LSTM weight and bias at zero, each gate is σ(0) = ½ and the candidate tanh(0) = 0:
  // from zero initial states the cell and hidden states stay 0, so the LSTM's outputs are 0 and
  // the residual passes the sequence through. The output layer then picks one position.
  const std::int64_t d = 6;
  auto m = make("g = \"sequential\"", 3, d);
  fill_parameters(*m, "g.lstm.", 0.0);
  torch::Tensor out = parameter(*m, "g.out.weight");  // [D, 3D]
  const torch::Tensor a = torch::randn({5, d}), c = torch::randn({5, d}), f = torch::randn({5, d});
  auto& g = *m->named_modules()["g"];
  const std::vector<torch::Tensor> expected = {a, f, c};  // the reference's (x, y, z) order
  for (std::int64_t position = 0; position < 3; ++position) {
    {
      torch::NoGradGuard no_grad;
      out.copy_(block_selector(d, 3, position));
    }
    const torch::Tensor summary = g.as<discovernet::TripletSummary>()->forward(a, c, f);
    EXPECT_TRUE(torch::allclose(summary, expected[static_cast<std::size_t>(position)], 1e-6, 1e-7))
        << "position " << position;
  }
  // Zero initial states make it deterministic, in training mode too (the released code's random
  // states do not).
  m->train();
  const auto t = random_triplets(*m, 4, d);
  EXPECT_TRUE(torch::equal(m->score(t.items, t.comparisons).weights,
                           m->score(t.items, t.comparisons).weights));
}

TEST(DiscoverNet, TransformerGMatchesAHandComputedAttention) {
  // W_q = 0 makes every attention score 0: each query attends uniformly to the 2P keys (the
  // tokens listed twice), so with W_v = I and the mixing layer = I each token becomes
  // mean(tokens) + token; summing over P tokens gives 2·Σ_p t_p, and the output layer [I 0] keeps
  // the first half of each token [φa‖φf], [φa‖φc] (+ [φf‖φc]).
  const std::int64_t d = 4;
  for (std::int64_t pairs : {2, 3}) {
    auto m = make("g = \"transformer\"\npairs = " + std::to_string(pairs), 3, d);
    m->eval();
    {
      torch::NoGradGuard no_grad;
      parameter(*m, "g.query.weight").zero_();
      parameter(*m, "g.value.weight").copy_(torch::eye(2 * d));
      parameter(*m, "g.mix.weight").copy_(torch::eye(2 * d));
      parameter(*m, "g.out.weight").copy_(block_selector(d, 2, 0));
      parameter(*m, "g.out.bias").zero_();
    }
    const torch::Tensor a = torch::randn({3, d}), c = torch::randn({3, d}),
                        f = torch::randn({3, d});
    const torch::Tensor expected = pairs == 2 ? 2.0 * (a + a) : 2.0 * (a + a + f);
    auto& g = *m->named_modules()["g"];
    EXPECT_TRUE(torch::allclose(g.as<discovernet::TripletSummary>()->forward(a, c, f), expected,
                                1e-5, 1e-6))
        << pairs << " pairs";
  }
}

TEST(DiscoverNet, TransformerGIsInitialisedAndRegularisedAsReleased) {
  torch::manual_seed(5);
  const std::int64_t d = 64;
  auto m = make("g = \"transformer\"", 4, d);
  // W_q, W_k, W_v ~ N(0, √(2/(2D + 2D))); 128×128 draws estimate the deviation to about 1%.
  for (const char* name : {"g.query.weight", "g.key.weight", "g.value.weight"}) {
    const torch::Tensor w = parameter(*m, name);
    EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / (4.0 * d)),
                0.03 * std::sqrt(2.0 / (4.0 * d)))
        << name;
    EXPECT_FALSE(parameter(*m, name).requires_grad());  // frozen with the branch, as released
  }
  // Dropout makes two training-mode passes differ; evaluation is deterministic.
  const auto t = random_triplets(*m, 8, d);
  m->train();
  EXPECT_FALSE(torch::equal(m->score(t.items, t.comparisons).weights,
                            m->score(t.items, t.comparisons).weights));
  m->eval();
  EXPECT_TRUE(torch::equal(m->score(t.items, t.comparisons).weights,
                           m->score(t.items, t.comparisons).weights));
}

TEST(DiscoverNet, SequentialGOptionsAreChecked) {
  const Diagnostics odd = wscsl::testing::bind_diagnostics(
      Kind::ConditionModule, "discovernet", "g = \"sequential\"\n", wscsl::testing::facts(4, 7));
  ASSERT_EQ(odd.error_count(), 1u) << odd.format();
  EXPECT_NE(odd.format().find("needs an even input_dim"), std::string::npos);
  const Diagnostics pairs = wscsl::testing::bind_diagnostics(Kind::ConditionModule, "discovernet",
                                                             "g = \"sequential\"\npairs = 2\n",
                                                             wscsl::testing::facts(4, 8));
  ASSERT_EQ(pairs.error_count(), 1u) << pairs.format();
  EXPECT_EQ(pairs.all()[0].message,
            "[condition_module] 'pairs' = 2 has no effect: it is read only with g = \"set\" or "
            "\"transformer\"");
}
