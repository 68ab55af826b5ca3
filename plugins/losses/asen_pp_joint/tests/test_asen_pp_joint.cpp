// ASEN++'s second-stage loss through the loader: the released weighted sum by hand, and the
// terms of the module it needs.
#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(AsenPpJoint, IsTheReleasedWeightedSumOfBothHingesAndTheAlignment) {
  auto loss = wscsl::testing::build<Loss>("asen_pp_joint",
                                          "margin = 0.2\nglobal_weight = 1.0\nlocal_weight = 0.1\n"
                                          "alignment_weight = 0.5");
  ItemFeatures items;
  items.phi = torch::zeros({3, 2});
  const Comparisons triplets = Comparisons::triplets(torch::tensor({{0, 1, 2}, {1, 2, 0}}));
  ComparisonScores s;
  // Hinges max(0, 0.2 − (far − close)): global 0.2 − 0.3 → 0 and 0.2 − 0.1 = 0.1, mean 0.05;
  // local 0.2 + 0.1 = 0.3 and 0.2 − 0.5 → 0, mean 0.15. In double: each value within a few ulps.
  s.aux["global_close"] = torch::tensor({0.1, 0.4}, torch::kDouble);
  s.aux["global_far"] = torch::tensor({0.4, 0.5}, torch::kDouble);
  s.aux["local_close"] = torch::tensor({0.3, 0.1}, torch::kDouble);
  s.aux["local_far"] = torch::tensor({0.2, 0.6}, torch::kDouble);
  s.aux["alignment"] = torch::tensor({0.6, 1.0}, torch::kDouble);
  const auto terms = loss->compute({items, triplets, s});
  EXPECT_NEAR(terms.at("global").item<double>(), 0.05, 1e-12);
  EXPECT_NEAR(terms.at("local").item<double>(), 0.1 * 0.15, 1e-12);
  EXPECT_NEAR(terms.at("alignment").item<double>(), 0.5 * 0.8, 1e-12);
}

TEST(AsenPpJoint, NeedsTheJointStagesTermsAndSomethingToTrain) {
  auto loss = wscsl::testing::build<Loss>("asen_pp_joint", "");
  EXPECT_EQ(loss->contract().needed_names(Resource::AuxTerm),
            (std::vector<std::string>{"global_close", "global_far", "local_close", "local_far",
                                      "alignment"}));
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Loss, "asen_pp_joint",
      "global_weight = 0.0\nlocal_weight = 0.0\nalignment_weight = 0.0");
  EXPECT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_NE(d.format().find("nothing to train"), std::string::npos) << d.format();
}
