#include <algorithm>
#include <limits>

#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

ComparisonScores hand_scores() {
  ComparisonScores s;
  // Two triplets, two embeddings. Hinges with γ = 0.2: ℓ = max(0, 0.2 − (far − close)).
  // triplet 0: k0 → 0.2 − (0.5 − 0.1) = 0 , k1 → 0.2 − (0.1 − 0.3) = 0.4
  // triplet 1: k0 → 0.2 − (0.2 − 0.6) = 0.6, k1 → 0.2 − (0.4 − 0.3) = 0.1
  s.second_distances = torch::tensor({{0.1f, 0.3f}, {0.6f, 0.3f}});
  s.third_distances = torch::tensor({{0.5f, 0.1f}, {0.2f, 0.4f}});
  return s;
}

}  // namespace

TEST(LsnMin, BatchFormTakesTheMinimumOfTheMeans) {
  auto loss = wscsl::testing::build<Loss>("lsn_min", "form = \"batch\"");
  const ItemBlocks items;  // the loss reads only the scores
  const Comparisons triplets;
  // Means per embedding: k0 = 0.3, k1 = 0.25 → 0.25.
  EXPECT_NEAR(loss->compute({items, triplets, hand_scores()}).at("lsn_min").item<double>(), 0.25,
              1e-6);
}

TEST(LsnMin, TripletFormTakesTheMeanOfTheMinima) {
  auto loss = wscsl::testing::build<Loss>("lsn_min", "form = \"triplet\"");
  const ItemBlocks items;
  const Comparisons triplets;
  // Minima per triplet: 0 and 0.1 → 0.05.
  EXPECT_NEAR(loss->compute({items, triplets, hand_scores()}).at("lsn_min").item<double>(), 0.05,
              1e-6);
}

TEST(LsnMin, BothFormsMatchNaiveLoops) {
  auto batch = wscsl::testing::build<Loss>("lsn_min", "margin = 0.4\nform = \"batch\"");
  auto triplet = wscsl::testing::build<Loss>("lsn_min", "margin = 0.4\nform = \"triplet\"");
  ComparisonScores s;
  s.second_distances = torch::rand({9, 3});
  s.third_distances = torch::rand({9, 3});
  std::vector<double> per_embedding(3, 0.0);
  double sum_of_minima = 0;
  for (int i = 0; i < 9; ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k < 3; ++k) {
      const double hinge = std::max(0.0, 0.4 - (s.third_distances[i][k].item<double>() -
                                                s.second_distances[i][k].item<double>()));
      per_embedding[k] += hinge / 9;
      best = std::min(best, hinge);
    }
    sum_of_minima += best;
  }
  const ItemBlocks items;
  const Comparisons triplets;
  EXPECT_NEAR(batch->compute({items, triplets, s}).at("lsn_min").item<double>(),
              *std::min_element(per_embedding.begin(), per_embedding.end()), 1e-6);
  EXPECT_NEAR(triplet->compute({items, triplets, s}).at("lsn_min").item<double>(),
              sum_of_minima / 9, 1e-6);
}
