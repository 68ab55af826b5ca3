// The shared building blocks of condition modules: distances, normalisations, CSN masks, scoring.
#include <gtest/gtest.h>

#include <cmath>

#include "wscsl/error.hpp"
#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"

using namespace wscsl;

TEST(Distances, PairwiseDistanceAddsItsEpsilonToTheDifference) {
  const torch::Tensor a = torch::tensor({{0.0, 0.0}, {1.0, 2.0}}, torch::kDouble);
  const torch::Tensor b = torch::tensor({{3.0, 4.0}, {1.0, 2.0}}, torch::kDouble);
  const torch::Tensor d = nn::pairwise_distance(a, b);
  EXPECT_DOUBLE_EQ(d[0].item<double>(), std::hypot(-3.0 + 1e-6, -4.0 + 1e-6));
  EXPECT_DOUBLE_EQ(d[1].item<double>(), std::sqrt(2.0) * 1e-6);  // never 0: a gradient exists
  const torch::Tensor plain = nn::euclidean_distance(a, b);
  EXPECT_DOUBLE_EQ(plain[0].item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(plain[1].item<double>(), 0.0);
  // Over the last dimension of [B, K, E].
  EXPECT_EQ(nn::pairwise_distance(torch::zeros({2, 3, 4}), torch::ones({2, 3, 4})).sizes(),
            (std::vector<std::int64_t>{2, 3}));
}

TEST(Distances, NormalisationsDifferOnlyInTheirEpsilon) {
  const torch::Tensor v = torch::tensor({{3.0, 4.0}, {0.0, 0.0}, {3e-13, 4e-13}}, torch::kDouble);
  const torch::Tensor clamped = nn::normalize_clamped(v, 1);
  EXPECT_DOUBLE_EQ(clamped[0][0].item<double>(), 0.6);
  EXPECT_DOUBLE_EQ(clamped[1][1].item<double>(), 0.0);            // zero stays zero, no NaN
  EXPECT_DOUBLE_EQ(clamped[2][0].item<double>(), 3e-13 / 1e-12);  // max(‖v‖, 1e-12)
  const torch::Tensor offset = nn::normalize_offset(v, 1);
  EXPECT_DOUBLE_EQ(offset[0][1].item<double>(), 4.0 / (5.0 + 1e-10));
  EXPECT_DOUBLE_EQ(offset[1][0].item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(offset[2][0].item<double>(), 3e-13 / (5e-13 + 1e-10));  // ‖v‖ + 1e-10
}

TEST(ConditionMasks, FixedMasksAreDisjointUntrainedBlocks) {
  nn::ConditionMasks masks(
      3, 8, nn::MaskInit::Fixed);  // ⌊8/3⌋ = 2: dimensions 6 and 7 belong to no block
  const torch::Tensor expected =
      torch::tensor({{1, 1, 0, 0, 0, 0, 0, 0}, {0, 0, 1, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 1, 0, 0}},
                    torch::kFloat);
  EXPECT_TRUE(torch::equal(masks.masks(), expected));
  EXPECT_FALSE(masks.trained());
  EXPECT_FALSE(masks.parameters()[0].requires_grad());
  EXPECT_TRUE(torch::equal(masks.l1_norms(), torch::full({3}, 2.0f)));
  const torch::Tensor phi = torch::randn({4, 8});
  const torch::Tensor psi = masks.apply(phi);
  ASSERT_EQ(psi.sizes(), (std::vector<std::int64_t>{4, 3, 8}));
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t k = 0; k < 3; ++k)
      for (std::int64_t j = 0; j < 8; ++j)
        EXPECT_EQ(psi[i][k][j].item<float>(),
                  phi[i][j].item<float>() * expected[k][j].item<float>());
}

TEST(ConditionMasks, TrainedMasksStartAsReleasedAndApplyAReLU) {
  nn::ConditionMasks prein(2, 6, nn::MaskInit::Prein);
  EXPECT_TRUE(prein.trained());
  EXPECT_TRUE(prein.parameters()[0].requires_grad());
  EXPECT_TRUE(torch::allclose(
      prein.masks(),
      torch::tensor({{1.0f, 1.0f, 1.0f, 0.1f, 0.1f, 0.1f}, {0.1f, 0.1f, 0.1f, 1.0f, 1.0f, 1.0f}})));
  torch::manual_seed(0);
  nn::ConditionMasks learned(200, 500, nn::MaskInit::Learned);
  const torch::Tensor weight = learned.parameters()[0];
  EXPECT_NEAR(weight.mean().item<double>(), 0.9, 0.01);  // N(0.9, 0.7) over 10^5 draws
  EXPECT_NEAR(weight.std().item<double>(), 0.7, 0.01);
  EXPECT_TRUE(torch::equal(learned.masks(), torch::relu(weight)));
  EXPECT_GT((weight < 0).sum().item<std::int64_t>(), 0);  // ≈ 10% negative, cut by the ReLU
  EXPECT_THROW(nn::ConditionMasks(0, 4, nn::MaskInit::Learned), Error);
  EXPECT_EQ(spelling_of(nn::mask_init_choices(), nn::MaskInit::Prein), "prein");
}

TEST(Scoring, ExpectedDistancesWeightEachEmbedding) {
  const torch::Tensor close = torch::tensor({{1.0f, 2.0f}, {3.0f, 4.0f}});
  const torch::Tensor far = torch::tensor({{5.0f, 6.0f}, {7.0f, 8.0f}});
  const torch::Tensor w = torch::tensor({{0.25f, 0.75f}, {1.0f, 0.0f}});
  const TripletScores s = nn::expected_distances(close, far, w);
  EXPECT_TRUE(torch::allclose(s.fused_close, torch::tensor({1.75f, 3.0f})));
  EXPECT_TRUE(torch::allclose(s.fused_far, torch::tensor({5.75f, 7.0f})));
  EXPECT_TRUE(torch::equal(s.weights, w));
}

TEST(Scoring, ConditionOneHotSelectsAndRejectsUnknownConditions) {
  const torch::Tensor w = nn::condition_one_hot(torch::tensor({2, 0}, torch::kLong), 3);
  EXPECT_TRUE(torch::equal(w, torch::tensor({{0.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 0.0f}})));
  try {
    nn::condition_one_hot(torch::tensor({1, 3}, torch::kLong), 3);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("triplet condition 3 has no embedding"),
              std::string::npos);
  }
}
