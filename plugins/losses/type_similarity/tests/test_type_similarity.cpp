#include <gtest/gtest.h>

#include <cmath>

#include "wscsl/testing/fixtures.hpp"
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

// The released loss_sim_t: with t the text features, has = all three members have text,
// ½[Σ has · max(0, d(t_f, t_c) − d(t_a, t_f) + μ) + Σ has · max(0, d(t_f, t_c) − d(t_a, t_c) + μ)]
// / max(Σ has, 1), d = F.pairwise_distance in the released argument order.
TEST(TypeSimilarity, TheTextPartMatchesANaiveLoopOverTheTripletsWithThreeTexts) {
  torch::manual_seed(5);
  const int b = 40;
  std::vector<bool> anchor(b), close(b), far(b);
  for (int i = 0; i < b; ++i)
    anchor[i] = i % 3 != 0, close[i] = i % 5 != 1, far[i] = i % 7 != 2;
  TripletInput in;
  in.phi_anchor = torch::randn({b, 5});
  in.phi_close = torch::randn({b, 5});
  in.phi_far = torch::randn({b, 5});
  in.texts["titles"] = {wscsl::testing::unit_text_features(anchor, 5),
                        wscsl::testing::unit_text_features(close, 5),
                        wscsl::testing::unit_text_features(far, 5)};
  const TextTriplet& t = in.texts.at("titles");
  const auto d = [](const torch::Tensor& a, const torch::Tensor& b, int i) {
    double s = 0;
    for (int j = 0; j < 5; ++j)
      s += std::pow(a[i][j].item<double>() - b[i][j].item<double>() + 1e-6, 2);
    return std::sqrt(s);
  };
  double first = 0, second = 0;
  int counted = 0;
  for (int i = 0; i < b; ++i) {
    if (!(anchor[i] && close[i] && far[i])) continue;
    ++counted;
    const double fc = d(t.far.features, t.close.features, i),
                 af = d(t.anchor.features, t.far.features, i),
                 ac = d(t.anchor.features, t.close.features, i);
    first += std::max(0.0, fc - af + 0.5);
    second += std::max(0.0, fc - ac + 0.5);
  }
  ASSERT_GT(counted, 10);
  ASSERT_LT(counted, b);
  const double expected = (first / counted + second / counted) / 2;
  // Unit vectors: distances of at most ~2 in float32, off by ~1e-6; a mean of such hinges as well.
  EXPECT_NEAR(compute("input = \"text\"\ntext = \"titles\"\nmargin = 0.5", in), expected, 1e-5);
  // The images are not read.
  TripletInput other = in;
  other.phi_close = torch::randn({b, 5});
  EXPECT_NEAR(compute("input = \"text\"\ntext = \"titles\"\nmargin = 0.5", other), expected, 1e-5);
}

// A triplet without all three texts adds nothing and has no gradient; with none, the term is 0.
TEST(TypeSimilarity, TheTextPartLeavesOutTripletsWithoutThreeTexts) {
  torch::manual_seed(6);
  TripletInput in;
  in.phi_anchor = in.phi_close = in.phi_far = torch::zeros({3, 4});
  const TextFeatures anchor = wscsl::testing::unit_text_features({true, false, true}, 4);
  const TextFeatures close = wscsl::testing::unit_text_features({true, true, true}, 4);
  const TextFeatures far = wscsl::testing::unit_text_features({true, true, false}, 4);
  in.texts["titles"] = {{anchor.features.clone().requires_grad_(true), anchor.present},
                        {close.features.clone().requires_grad_(true), close.present},
                        {far.features.clone().requires_grad_(true), far.present}};
  auto loss = wscsl::testing::build<Loss>("type_similarity", "input = \"text\"\ntext = \"titles\"");
  const TripletScores s;
  // With a margin of 0.3 and unit vectors the first triplet alone gives the term, whatever it is.
  torch::Tensor value = loss->compute({in, s, nullptr}).at("type_similarity");
  TripletInput first = in;
  for (TextFeatures* f :
       {&first.texts["titles"].anchor, &first.texts["titles"].close, &first.texts["titles"].far})
    *f = f->index_select(torch::tensor({0}, torch::kLong));
  first.phi_anchor = first.phi_close = first.phi_far = torch::zeros({1, 4});
  EXPECT_NEAR(value.item<double>(),
              loss->compute({first, s, nullptr}).at("type_similarity").item<double>(), 1e-6);
  value.backward();
  const TextTriplet& t = in.texts.at("titles");
  for (const torch::Tensor* g : {&t.anchor.features, &t.close.features, &t.far.features})
    EXPECT_EQ(g->grad().slice(0, 1).abs().sum().item<double>(), 0.0);
  // No triplet with three texts: 0, not NaN.
  TripletInput none = in;
  none.texts["titles"].anchor = wscsl::testing::unit_text_features({false, false, false}, 4);
  EXPECT_EQ(loss->compute({none, s, nullptr}).at("type_similarity").item<double>(), 0.0);
}

TEST(TypeSimilarity, TheContractNeedsTextFeaturesOnlyForTheTextPart) {
  EXPECT_FALSE(wscsl::testing::build<Loss>("type_similarity")
                   ->contract()
                   .needs_resource(Resource::TextFeatures));
  EXPECT_EQ(wscsl::testing::build<Loss>("type_similarity", "input = \"text\"\ntext = \"titles\"")
                ->contract()
                .needed_names(Resource::TextFeatures),
            (std::vector<std::string>{"titles"}));
  // Without its text features the loss refuses the input.
  TripletInput in;
  in.phi_anchor = in.phi_close = in.phi_far = torch::zeros({2, 4});
  const TripletScores s;
  EXPECT_THROW(wscsl::testing::build<Loss>("type_similarity", "input = \"text\"\ntext = \"titles\"")
                   ->compute({in, s, nullptr}),
               ComponentError);
}

TEST(TypeSimilarity, RejectsInconsistentTextOptions) {
  const auto errors = [](const std::string& options) {
    return wscsl::testing::bind_diagnostics(Kind::Loss, "type_similarity", options).error_count();
  };
  EXPECT_EQ(errors("input = \"text\""), 1u);   // text missing
  EXPECT_EQ(errors("text = \"titles\""), 1u);  // inert for images
  EXPECT_EQ(errors("input = \"text\"\ntext = \"titles\"\nsign = \"paper\""), 1u);  // inert
  EXPECT_EQ(errors("input = \"words\""), 1u);
  EXPECT_EQ(errors("input = \"text\"\ntext = \"titles\""), 0u);
}

TEST(TypeSimilarity, RejectsANegativeMarginAndAnUnknownSign) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::Loss, "type_similarity",
                                                         "margin = -0.1\nsign = \"apart\"");
  EXPECT_EQ(d.error_count(), 2u) << d.format();
}
