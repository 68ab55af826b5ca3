#include <cmath>

#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(CsnRegularizers, HandComputedEmbeddingNormAndMaskTerm) {
  auto loss =
      wscsl::testing::build<Loss>("csn_regularizers", "embedding_weight = 0.5\nmask_weight = 0.1");
  // Four items, the zero one in three roles: anchors (3, 4), (0, 0): ‖·‖_F = 5; close (0, 0),
  // (0, 2): 2; far (1, 0), (0, 0): 1.
  ItemFeatures items;
  items.phi = torch::tensor({{1.0f, 0.0f}, {3.0f, 4.0f}, {0.0f, 0.0f}, {0.0f, 2.0f}});
  const Comparisons triplets =
      Comparisons::triplets(torch::tensor({{1, 2, 0}, {2, 3, 2}}, torch::kLong));
  ComparisonScores s;
  s.aux["mask_l1"] = torch::tensor({2.0f, 4.0f});
  const auto terms = loss->compute({items, triplets, s});
  EXPECT_NEAR(terms.at("embedding_norm").item<double>(), 0.5 * 8.0 / 3.0 / std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(terms.at("mask_l1").item<double>(), 0.1 * 3.0, 1e-6);
}

TEST(CsnRegularizers, NeedsTheMaskNormsOnlyWithAMaskTerm) {
  auto loss = wscsl::testing::build<Loss>("csn_regularizers", "");
  EXPECT_EQ(loss->contract().needed_names(Resource::AuxTerm),
            (std::vector<std::string>{"mask_l1"}));
  ItemFeatures items;
  items.phi = torch::ones({6, 2});
  const Comparisons triplets = Comparisons::triplets_by_role(2, torch::kCPU);
  ComparisonScores s;
  try {
    loss->compute({items, triplets, s});
    FAIL() << "expected the missing aux term to be refused";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the aux term 'mask_l1' of the condition module"),
              std::string::npos)
        << e.what();
  }
  auto norms_only = wscsl::testing::build<Loss>("csn_regularizers", "mask_weight = 0.0");
  EXPECT_TRUE(norms_only->contract().needs.empty());
  EXPECT_EQ(norms_only->compute({items, triplets, s}).count("embedding_norm"), 1u);
}

TEST(CsnRegularizers, RejectsTwoZeroWeights) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Loss, "csn_regularizers", "embedding_weight = 0.0\nmask_weight = 0.0");
  EXPECT_EQ(d.error_count(), 1u);
}
