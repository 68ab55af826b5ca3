#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::testing::TripletRoles;

namespace {

std::shared_ptr<Loss> make_visual_semantic(const std::string& options = "") {
  return wscsl::testing::build<Loss>("visual_semantic", "text = \"titles\"\n" + options);
}

// The term on the triplets laid out as the host lays them out.
torch::Tensor term(Loss& loss, const TripletRoles& in) {
  const ItemBlocks items = in.items();
  const Comparisons triplets = in.triplets();
  const ComparisonScores s;
  const auto terms = loss.compute({items, triplets, s});
  EXPECT_EQ(terms.size(), 1u);
  return terms.at("visual_semantic");
}

double compute(Loss& loss, const TripletRoles& in) {
  return term(loss, in).item<double>();
}

// F.pairwise_distance of row i: ‖a − b + 1e-6‖.
double distance(const torch::Tensor& a, const torch::Tensor& b, std::int64_t i) {
  double s = 0;
  for (std::int64_t j = 0; j < a.size(1); ++j)
    s += std::pow(a[i][j].item<double>() - b[i][j].item<double>() + 1e-6, 2);
  return std::sqrt(s);
}

}  // namespace

// One triplet on a line (φ and t of one dimension): anchor image 0 with text 0.1, close image 1
// with text 3, far image 3 with text 2.9 (+1e-6 on each difference, negligible here). Anchor: own
// 0.1, others 0.9 and 2.9 → both hinges 0. Close: own 2, others 3 and 0 → ½(0 + 2.3) = 1.15.
// Far: own 0.1, others 2.9 and 1.9 → 0. Loss = (0 + 1.15 + 0) / 3.
TEST(VisualSemantic, ByHand) {
  TripletRoles in;
  in.anchor.phi = torch::tensor({{0.0f}});
  in.close.phi = torch::tensor({{1.0f}});
  in.far.phi = torch::tensor({{3.0f}});
  const torch::Tensor yes = torch::tensor({true});
  in.anchor.texts["titles"] = {torch::tensor({{0.1f}}), yes};
  in.close.texts["titles"] = {torch::tensor({{3.0f}}), yes};
  in.far.texts["titles"] = {torch::tensor({{2.9f}}), yes};
  EXPECT_NEAR(compute(*make_visual_semantic(), in), 1.15 / 3, 1e-6);
  // Without the close item's text only the two zero terms are left.
  in.close.texts["titles"] = {torch::zeros({1, 1}), torch::tensor({false})};
  EXPECT_EQ(compute(*make_visual_semantic(), in), 0.0);
}

// For each member x with text t_x and the two others y, z:
// ½[Σ_i has_x · max(0, d(φ_x, t_x) − d(φ_y, t_x) + μ) + (same with z)] / max(Σ_i has_x, 1),
// averaged over the three members; d = F.pairwise_distance with the image first.
TEST(VisualSemantic, MatchesANaiveLoopWithItemsWithoutText) {
  torch::manual_seed(7);
  const std::int64_t b = 40, e = 6;
  std::array<std::vector<bool>, 3> present;  // anchor, close, far
  for (auto& p : present)
    p.resize(b);
  for (std::int64_t i = 0; i < b; ++i) {
    present[0][static_cast<std::size_t>(i)] = i % 3 != 0;
    present[1][static_cast<std::size_t>(i)] = i % 4 != 1;
    present[2][static_cast<std::size_t>(i)] = i < 30;
  }
  TripletRoles in;
  // φ of norm ~1 like the unit texts, so that the hinges are a mix of active and inactive.
  in.anchor.phi = torch::randn({b, e}) / std::sqrt(e);
  in.close.phi = torch::randn({b, e}) / std::sqrt(e);
  in.far.phi = torch::randn({b, e}) / std::sqrt(e);
  in.anchor.texts["titles"] = wscsl::testing::unit_text_features(present[0], e);
  in.close.texts["titles"] = wscsl::testing::unit_text_features(present[1], e);
  in.far.texts["titles"] = wscsl::testing::unit_text_features(present[2], e);
  const std::array<const torch::Tensor*, 3> phi = {&in.anchor.phi, &in.close.phi, &in.far.phi};
  const std::array<const torch::Tensor*, 3> text = {&in.anchor.texts.at("titles").features,
                                                    &in.close.texts.at("titles").features,
                                                    &in.far.texts.at("titles").features};
  for (const double margin : {0.3, 1.0}) {
    double total = 0;
    int active = 0, inactive = 0;
    for (std::size_t x = 0; x < 3; ++x) {
      double first = 0, second = 0;
      int counted = 0;
      const std::size_t y = (x + 1) % 3, z = (x + 2) % 3;
      for (std::int64_t i = 0; i < b; ++i) {
        if (!present[x][static_cast<std::size_t>(i)]) continue;
        ++counted;
        const double own = distance(*phi[x], *text[x], i);
        const double hy = own - distance(*phi[y], *text[x], i) + margin,
                     hz = own - distance(*phi[z], *text[x], i) + margin;
        first += std::max(0.0, hy);
        second += std::max(0.0, hz);
        for (double h : {hy, hz})
          (h > 0 ? active : inactive) += 1;
      }
      total += (first / std::max(counted, 1) + second / std::max(counted, 1)) / 2;
    }
    EXPECT_GT(active, 0);
    EXPECT_GT(inactive, 0);
    // Distances of ~1 in float32 are off by ~1e-7 relative; means of such hinges as well.
    EXPECT_NEAR(compute(*make_visual_semantic(fmt::format("margin = {}", margin)), in), total / 3,
                1e-5)
        << margin;
  }
}

// The rows of items without text carry no gradient to their images or texts.
TEST(VisualSemantic, ItemsWithoutTextAreLeftOut) {
  torch::manual_seed(8);
  TripletRoles in;
  in.anchor.phi = torch::randn({4, 3}).requires_grad_(true);
  in.close.phi = torch::randn({4, 3}).requires_grad_(true);
  in.far.phi = torch::randn({4, 3}).requires_grad_(true);
  const std::vector<bool> only_first = {true, false, false, false};
  for (ItemFeatures* role : {&in.anchor, &in.close, &in.far})
    role->texts["titles"] = wscsl::testing::unit_text_features(only_first, 3);
  torch::Tensor value = term(*make_visual_semantic("margin = 10"), in);
  value.backward();
  for (const ItemFeatures* role : {&in.anchor, &in.close, &in.far}) {
    EXPECT_GT(role->phi.grad()[0].abs().sum().item<double>(), 0.0);
    EXPECT_EQ(role->phi.grad().slice(0, 1).abs().sum().item<double>(), 0.0);
  }
  // No text anywhere: 0, not NaN.
  const std::vector<bool> none(4, false);
  for (ItemFeatures* role : {&in.anchor, &in.close, &in.far})
    role->texts["titles"] = wscsl::testing::unit_text_features(none, 3);
  EXPECT_EQ(compute(*make_visual_semantic(), in), 0.0);
}

TEST(VisualSemantic, NeedsItsTextEncoderAndRejectsBadOptions) {
  EXPECT_EQ(make_visual_semantic()->contract().needed_names(Resource::TextFeatures),
            (std::vector<std::string>{"titles"}));
  ItemFeatures items;
  items.phi = torch::zeros({6, 3});
  const Comparisons triplets = Comparisons::triplets_by_role(2, torch::kCPU);
  const ComparisonScores s;
  EXPECT_THROW(make_visual_semantic()->compute({items, triplets, s}), ComponentError);
  const auto errors = [](const std::string& options) {
    return wscsl::testing::bind_diagnostics(Kind::Loss, "visual_semantic", options).error_count();
  };
  EXPECT_EQ(errors(""), 1u);  // text is required
  EXPECT_EQ(errors("text = \"titles\"\nmargin = -0.1"), 1u);
  EXPECT_EQ(errors("text = \"titles\"\nmargin = 0.2"), 0u);
}
