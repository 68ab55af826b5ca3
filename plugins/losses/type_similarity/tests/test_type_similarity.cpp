#include <gtest/gtest.h>

#include <cmath>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

// One triplet on a line (φ of one dimension): anchor 0, close 1, far 3, so d(f, c) = 2,
// d(f, a) = 3, d(c, a) = 1 (plus F.pairwise_distance's 1e-6).
TripletInput line_triplet() {
  TripletInput in;
  in.phi_anchor = torch::tensor({{0.0f}}).requires_grad_(true);
  in.phi_close = torch::tensor({{1.0f}}).requires_grad_(true);
  in.phi_far = torch::tensor({{3.0f}}).requires_grad_(true);
  return in;
}

double compute(const std::string& options, const TripletInput& in) {
  auto loss = wscsl::testing::build<Loss>("type_similarity", options);
  const TripletScores s;
  const auto terms = loss->compute({in, s, nullptr});
  EXPECT_EQ(terms.size(), 1u);
  torch::Tensor v = terms.at("type_similarity");
  if (in.phi_close.requires_grad()) v.backward();
  return v.item<double>();
}

}  // namespace

// Released: ½[max(0, 3 − 2 + 0.3) + max(0, 1 − 2 + 0.3)] = ½ · 1.3; the gradient moves close and
// far apart (d(f, c) grows as close moves left and far right).
TEST(TypeSimilarity, ReleasedSignByHandPushesCloseAndFarApart) {
  const TripletInput in = line_triplet();
  EXPECT_NEAR(compute("", in), 0.65, 1e-6);
  // ∂/∂far of ½(|f − a| − |f − c| + 0.3) = ½(1 − 1) = 0; ∂/∂close = ½(+1) (−|f − c|, c < f).
  EXPECT_NEAR(in.phi_close.grad().item<double>(), 0.5, 1e-6);
  EXPECT_NEAR(in.phi_far.grad().item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(in.phi_anchor.grad().item<double>(), -0.5, 1e-6);
}

// Paper: ½[max(0, 2 − 3 + 0.3) + max(0, 2 − 1 + 0.3)] = ½ · 1.3 as well here, but the gradient
// pulls close and far together.
TEST(TypeSimilarity, PaperSignByHandPullsCloseAndFarTogether) {
  const TripletInput in = line_triplet();
  EXPECT_NEAR(compute("sign = \"paper\"\nmargin = 0.3", in), 0.65, 1e-6);
  // ½ ∂/∂c (|f − c| − |c − a|) = ½(−1 − 1) = −1; ½ ∂/∂f (|f − c|) = ½; ∂/∂a (−|c − a|) · ½ = ½.
  EXPECT_NEAR(in.phi_close.grad().item<double>(), -1.0, 1e-6);
  EXPECT_NEAR(in.phi_far.grad().item<double>(), 0.5, 1e-6);
  EXPECT_NEAR(in.phi_anchor.grad().item<double>(), 0.5, 1e-6);
}

TEST(TypeSimilarity, MatchesANaiveLoop) {
  torch::manual_seed(4);
  TripletInput in;
  in.phi_anchor = torch::randn({40, 5});
  in.phi_close = torch::randn({40, 5});
  in.phi_far = torch::randn({40, 5});
  const auto d = [&](const torch::Tensor& a, const torch::Tensor& b, int i) {
    double s = 0;
    for (int j = 0; j < 5; ++j)
      s += std::pow(a[i][j].item<double>() - b[i][j].item<double>() + 1e-6, 2);
    return std::sqrt(s);
  };
  for (const bool paper : {false, true}) {
    double first = 0, second = 0;
    for (int i = 0; i < 40; ++i) {
      const double fc = d(in.phi_far, in.phi_close, i), fa = d(in.phi_far, in.phi_anchor, i),
                   ca = d(in.phi_close, in.phi_anchor, i);
      first += std::max(0.0, (paper ? fc - fa : fa - fc) + 0.5);
      second += std::max(0.0, (paper ? fc - ca : ca - fc) + 0.5);
    }
    const double expected = (first / 40 + second / 40) / 2;
    // float32 distances of ~3 are off by ~1e-6; a mean of such hinges as well.
    EXPECT_NEAR(compute(paper ? "sign = \"paper\"\nmargin = 0.5" : "margin = 0.5", in), expected,
                1e-5);
  }
}

TEST(TypeSimilarity, RejectsANegativeMarginAndAnUnknownSign) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::Loss, "type_similarity",
                                                         "margin = -0.1\nsign = \"apart\"");
  EXPECT_EQ(d.error_count(), 2u) << d.format();
}
