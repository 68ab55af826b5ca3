#include <gtest/gtest.h>

#include <cmath>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::testing::TripletRoles;

namespace {

// One triplet on a line (φ of one dimension): anchor 0, close 1, far 3, so d(f, c) = 2,
// d(f, a) = 3, d(c, a) = 1 (plus F.pairwise_distance's 1e-6).
TripletRoles line_triplet() {
  TripletRoles in;
  in.anchor.phi = torch::tensor({{0.0f}}).requires_grad_(true);
  in.close.phi = torch::tensor({{1.0f}}).requires_grad_(true);
  in.far.phi = torch::tensor({{3.0f}}).requires_grad_(true);
  return in;
}

double compute(const std::string& options, const TripletRoles& in) {
  auto loss = wscsl::testing::build<Loss>("type_similarity", options);
  const ItemBlocks items = in.items();
  const Comparisons triplets = in.triplets();
  const ComparisonScores s;
  const auto terms = loss->compute({items, triplets, s});
  EXPECT_EQ(terms.size(), 1u);
  torch::Tensor v = terms.at("type_similarity");
  if (in.close.phi.requires_grad()) v.backward();
  return v.item<double>();
}

}  // namespace

// Released: ½[max(0, 3 − 2 + 0.3) + max(0, 1 − 2 + 0.3)] = ½ · 1.3; the gradient moves close and
// far apart (d(f, c) grows as close moves left and far right).
TEST(TypeSimilarity, ReleasedSignByHandPushesCloseAndFarApart) {
  const TripletRoles in = line_triplet();
  EXPECT_NEAR(compute("", in), 0.65, 1e-6);
  // ∂/∂far of ½(|f − a| − |f − c| + 0.3) = ½(1 − 1) = 0; ∂/∂close = ½(+1) (−|f − c|, c < f).
  EXPECT_NEAR(in.close.phi.grad().item<double>(), 0.5, 1e-6);
  EXPECT_NEAR(in.far.phi.grad().item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(in.anchor.phi.grad().item<double>(), -0.5, 1e-6);
}

// Paper: ½[max(0, 2 − 3 + 0.3) + max(0, 2 − 1 + 0.3)] = ½ · 1.3 as well here, but the gradient
// pulls close and far together.
TEST(TypeSimilarity, PaperSignByHandPullsCloseAndFarTogether) {
  const TripletRoles in = line_triplet();
  EXPECT_NEAR(compute("sign = \"paper\"\nmargin = 0.3", in), 0.65, 1e-6);
  // ½ ∂/∂c (|f − c| − |c − a|) = ½(−1 − 1) = −1; ½ ∂/∂f (|f − c|) = ½; ∂/∂a (−|c − a|) · ½ = ½.
  EXPECT_NEAR(in.close.phi.grad().item<double>(), -1.0, 1e-6);
  EXPECT_NEAR(in.far.phi.grad().item<double>(), 0.5, 1e-6);
  EXPECT_NEAR(in.anchor.phi.grad().item<double>(), 0.5, 1e-6);
}

TEST(TypeSimilarity, MatchesANaiveLoop) {
  torch::manual_seed(4);
  TripletRoles in;
  in.anchor.phi = torch::randn({40, 5});
  in.close.phi = torch::randn({40, 5});
  in.far.phi = torch::randn({40, 5});
  const auto d = [&](const torch::Tensor& a, const torch::Tensor& b, int i) {
    double s = 0;
    for (int j = 0; j < 5; ++j)
      s += std::pow(a[i][j].item<double>() - b[i][j].item<double>() + 1e-6, 2);
    return std::sqrt(s);
  };
  for (const bool paper : {false, true}) {
    double first = 0, second = 0;
    for (int i = 0; i < 40; ++i) {
      const double fc = d(in.far.phi, in.close.phi, i), fa = d(in.far.phi, in.anchor.phi, i),
                   ca = d(in.close.phi, in.anchor.phi, i);
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
  TripletRoles in;
  in.anchor.phi = torch::randn({b, 5});
  in.close.phi = torch::randn({b, 5});
  in.far.phi = torch::randn({b, 5});
  in.anchor.texts["titles"] = wscsl::testing::unit_text_features(anchor, 5);
  in.close.texts["titles"] = wscsl::testing::unit_text_features(close, 5);
  in.far.texts["titles"] = wscsl::testing::unit_text_features(far, 5);
  const torch::Tensor& t_anchor = in.anchor.texts.at("titles").features;
  const torch::Tensor& t_close = in.close.texts.at("titles").features;
  const torch::Tensor& t_far = in.far.texts.at("titles").features;
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
    const double fc = d(t_far, t_close, i), af = d(t_anchor, t_far, i),
                 ac = d(t_anchor, t_close, i);
    first += std::max(0.0, fc - af + 0.5);
    second += std::max(0.0, fc - ac + 0.5);
  }
  ASSERT_GT(counted, 10);
  ASSERT_LT(counted, b);
  const double expected = (first / counted + second / counted) / 2;
  // Unit vectors: distances of at most ~2 in float32, off by ~1e-6; a mean of such hinges as well.
  EXPECT_NEAR(compute("input = \"text\"\ntext = \"titles\"\nmargin = 0.5", in), expected, 1e-5);
  // The images are not read.
  TripletRoles other = in;
  other.close.phi = torch::randn({b, 5});
  EXPECT_NEAR(compute("input = \"text\"\ntext = \"titles\"\nmargin = 0.5", other), expected, 1e-5);
}

// A triplet without all three texts adds nothing and has no gradient; with none, the term is 0.
TEST(TypeSimilarity, TheTextPartLeavesOutTripletsWithoutThreeTexts) {
  torch::manual_seed(6);
  TripletRoles in;
  in.anchor.phi = in.close.phi = in.far.phi = torch::zeros({3, 4});
  const TextFeatures anchor = wscsl::testing::unit_text_features({true, false, true}, 4);
  const TextFeatures close = wscsl::testing::unit_text_features({true, true, true}, 4);
  const TextFeatures far = wscsl::testing::unit_text_features({true, true, false}, 4);
  in.anchor.texts["titles"] = {anchor.features.clone().requires_grad_(true), anchor.present};
  in.close.texts["titles"] = {close.features.clone().requires_grad_(true), close.present};
  in.far.texts["titles"] = {far.features.clone().requires_grad_(true), far.present};
  auto loss = wscsl::testing::build<Loss>("type_similarity", "input = \"text\"\ntext = \"titles\"");
  const ItemBlocks items = in.items();
  const Comparisons triplets = in.triplets();
  const ComparisonScores s;
  // With a margin of 0.3 and unit vectors the first triplet alone gives the term, whatever it is.
  torch::Tensor value = loss->compute({items, triplets, s}).at("type_similarity");
  EXPECT_NEAR(value.item<double>(),
              loss->compute({items, triplets.slice(0, 1), s}).at("type_similarity").item<double>(),
              1e-6);
  value.backward();
  for (const ItemFeatures* role : {&in.anchor, &in.close, &in.far})
    EXPECT_EQ(role->texts.at("titles").features.grad().slice(0, 1).abs().sum().item<double>(), 0.0);
  // No triplet with three texts: 0, not NaN.
  TripletRoles none = in;
  none.anchor.texts["titles"] = wscsl::testing::unit_text_features({false, false, false}, 4);
  const ItemBlocks none_items = none.items();
  EXPECT_EQ(loss->compute({none_items, triplets, s}).at("type_similarity").item<double>(), 0.0);
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
  ItemFeatures items;
  items.phi = torch::zeros({6, 4});
  const Comparisons triplets = Comparisons::triplets_by_role(2, torch::kCPU);
  const ComparisonScores s;
  EXPECT_THROW(wscsl::testing::build<Loss>("type_similarity", "input = \"text\"\ntext = \"titles\"")
                   ->compute({items, triplets, s}),
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
