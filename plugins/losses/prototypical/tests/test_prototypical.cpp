#include <cmath>

#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(Prototypical, MatchesANaiveLoop) {
  auto loss = wscsl::testing::build<Loss>("prototypical", "temperature = 0.5");
  const torch::Tensor psi_anchor = torch::randn({4, 2, 3});
  const torch::Tensor psi_close = torch::randn({4, 2, 3});
  const torch::Tensor psi_far = torch::randn({4, 2, 3});
  ItemFeatures items;
  items.psi = torch::cat({psi_anchor, psi_close, psi_far});
  const Comparisons triplets = Comparisons::triplets_by_role(4, torch::kCPU);
  const ComparisonScores s;
  const auto a = psi_anchor.reshape({4, -1}), c = psi_close.reshape({4, -1});
  const auto prototypes = (a + c) / 2;
  double naive = 0;
  for (int role = 0; role < 2; ++role)
    for (int i = 0; i < 4; ++i) {
      const auto h = role == 0 ? a[i] : c[i];
      double log_sum = 0;
      for (int n = 0; n < 4; ++n)
        log_sum += std::exp(-(h - prototypes[n]).pow(2).sum().item<double>() / 0.5);
      naive += (h - prototypes[i]).pow(2).sum().item<double>() / 0.5 + std::log(log_sum);
    }
  EXPECT_NEAR(loss->compute({items, triplets, s}).at("prototypical").item<double>(), naive / 8,
              1e-5);
}

TEST(Prototypical, RejectsANonPositiveTemperature) {
  const Diagnostics d =
      wscsl::testing::bind_diagnostics(Kind::Loss, "prototypical", "temperature = 0.0");
  EXPECT_EQ(d.error_count(), 1u);
}
