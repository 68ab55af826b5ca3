#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

std::shared_ptr<ConditionModule> make(const std::string& options) {
  return wscsl::testing::build<ConditionModule>("sce_attention", options,
                                                wscsl::testing::facts(3, 5));
}

// x / (‖x‖ + 1e-10), or x itself.
std::vector<double> normalised(const torch::Tensor& x, bool normalize) {
  std::vector<double> v(static_cast<std::size_t>(x.size(0)));
  double norm = 0;
  for (std::int64_t j = 0; j < x.size(0); ++j) {
    v[static_cast<std::size_t>(j)] = x[j].item<double>();
    norm += v[static_cast<std::size_t>(j)] * v[static_cast<std::size_t>(j)];
  }
  if (normalize)
    for (double& e : v)
      e /= std::sqrt(norm) + 1e-10;
  return v;
}

}  // namespace

TEST(SceAttention, FusedDistancesFollowANaiveLoopOverTheBranchAndTheMasks) {
  torch::manual_seed(0);
  for (const bool normalize : {true, false}) {
    auto m = make(std::string("hidden = 4\nnormalize = ") + (normalize ? "true" : "false"));
    const TripletInput in = wscsl::testing::random_triplets(*m, 6, 5);
    const TripletScores s = m->score(in);
    const torch::Tensor w1 = parameter(*m, "branch_hidden.weight"),
                        b1 = parameter(*m, "branch_hidden.bias"),
                        w2 = parameter(*m, "branch_out.weight"),
                        b2 = parameter(*m, "branch_out.bias"),
                        masks = torch::relu(parameter(*m, "masks.weight"));
    for (std::int64_t i = 0; i < 6; ++i) {
      // The branch reads [φa; φf; φc], the reference's (anchor, far, close) order.
      std::vector<double> input;
      for (const torch::Tensor* x : {&in.phi_anchor, &in.phi_far, &in.phi_close})
        for (double v : normalised((*x)[i], normalize))
          input.push_back(v);
      std::vector<double> hidden(4), logits(3), w(3);
      for (std::int64_t h = 0; h < 4; ++h) {
        double v = b1[h].item<double>();
        for (std::int64_t j = 0; j < 15; ++j)
          v += w1[h][j].item<double>() * input[static_cast<std::size_t>(j)];
        hidden[static_cast<std::size_t>(h)] = std::max(0.0, v);
      }
      double total = 0;
      for (std::int64_t k = 0; k < 3; ++k) {
        double v = b2[k].item<double>();
        for (std::int64_t h = 0; h < 4; ++h)
          v += w2[k][h].item<double>() * hidden[static_cast<std::size_t>(h)];
        logits[static_cast<std::size_t>(k)] = std::exp(v);
        total += std::exp(v);
      }
      for (std::int64_t k = 0; k < 3; ++k) {
        w[static_cast<std::size_t>(k)] = logits[static_cast<std::size_t>(k)] / total;
        EXPECT_NEAR(s.weights[i][k].item<double>(), w[static_cast<std::size_t>(k)], 1e-5);
      }
      // E(v) = Σ_k w_k ψ_k(v), ψ_k = (φ ⊙ relu(m_k)) normalised; d = ‖E(a) − E(·) + 1e-6‖.
      auto fused = [&](const torch::Tensor& phi) {
        std::vector<double> e(5, 0.0);
        for (std::int64_t k = 0; k < 3; ++k) {
          const std::vector<double> psi = normalised(phi[i] * masks[k], normalize);
          for (std::size_t j = 0; j < 5; ++j)
            e[j] += w[static_cast<std::size_t>(k)] * psi[j];
        }
        return e;
      };
      const std::vector<double> ea = fused(in.phi_anchor), ec = fused(in.phi_close),
                                ef = fused(in.phi_far);
      double close = 0, far = 0;
      for (std::size_t j = 0; j < 5; ++j) {
        close += std::pow(ea[j] - ec[j] + 1e-6, 2);
        far += std::pow(ea[j] - ef[j] + 1e-6, 2);
      }
      EXPECT_NEAR(s.fused_close[i].item<double>(), std::sqrt(close), 1e-5) << normalize;
      EXPECT_NEAR(s.fused_far[i].item<double>(), std::sqrt(far), 1e-5) << normalize;
    }
    // Mask L1 as the reference accumulates it: the mean over masks of ‖relu(m_k)‖₁.
    EXPECT_NEAR(s.aux.at("mask_l1")[0].item<double>(), masks.sum(1).mean().item<double>(), 1e-5);
  }
}

TEST(SceAttention, TheWeightsDependOnTheOrderOfTheTriplet) {
  torch::manual_seed(1);
  auto m = make("");
  const TripletInput in = wscsl::testing::random_triplets(*m, 8, 5);
  const TripletScores s = m->score(in), r = m->score(in.reversed());
  EXPECT_GT((s.weights - r.weights).abs().max().item<double>(), 1e-5);
  EXPECT_TRUE(torch::allclose(s.weights.sum(1), torch::ones({8})));
  EXPECT_EQ(m->supervision(), Supervision::Weak);
}

TEST(SceAttention, EachEmbeddingIsAMaskedUnitVector) {
  auto m = make("masks = \"prein\"");
  const torch::Tensor psi = m->embed(torch::randn({4, 5}));
  EXPECT_TRUE(torch::allclose(psi.norm(2, {2}), torch::ones({4, 3}), 1e-5, 1e-6));
}
