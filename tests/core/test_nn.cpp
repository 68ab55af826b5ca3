// The shared building blocks of condition modules and losses: distances, normalisations, CSN masks,
// scoring, hinges.
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <torch/nn/modules/batchnorm.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/batch_norm.hpp"
#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/hinge.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/testing/fixtures.hpp"

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
  const ComparisonScores s = nn::expected_distances(close, far, w);
  EXPECT_TRUE(torch::allclose(s.fused_second, torch::tensor({1.75f, 3.0f})));
  EXPECT_TRUE(torch::allclose(s.fused_third, torch::tensor({5.75f, 7.0f})));
  EXPECT_TRUE(torch::equal(s.weights, w));
}

// Nothing is read back: a triplet without a condition is refused by the host before training
// (tests/host/test_evaluation.cpp, SplitCheck), a conditioned TorchScript module with fewer
// embeddings than conditions when it is built.
TEST(Scoring, ConditionOneHotSelectsTheConditionsEmbedding) {
  const torch::Tensor w = nn::condition_one_hot(torch::tensor({2, 0}, torch::kLong), 3);
  EXPECT_TRUE(torch::equal(w, torch::tensor({{0.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 0.0f}})));
}

// Items with ψ_0 and ψ_1 of one value each: item 0 (0, 0), item 1 (3, 1), item 2 (1, 5). The
// triplet (0, 1, 2) under condition 0 reads ψ_0: d = 3 and 1; under condition 1, ψ_1: d = 1 and 5.
// The pair (1, 2) under condition 1 reads |1 − 5| = 4.
TEST(Scoring, ConditionedDistancesScoreEachComparisonWithItsConditionsEmbedding) {
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5}, Supervision::Conditioned);
  ItemFeatures items;
  items.phi = torch::tensor({{0.0f, 0.0f}, {3.0f, 1.0f}, {1.0f, 5.0f}});
  items.psi = module.embed(items.phi);
  Comparisons triplets = Comparisons::triplets(torch::tensor({{0, 1, 2}, {0, 1, 2}}, torch::kLong));
  triplets.conditions = torch::tensor({0, 1}, torch::kLong);
  const ComparisonScores s = nn::conditioned_distances(module, items, triplets);
  EXPECT_TRUE(torch::allclose(s.fused_second, torch::tensor({3.0f, 1.0f})));
  EXPECT_TRUE(torch::allclose(s.fused_third, torch::tensor({1.0f, 5.0f})));
  EXPECT_TRUE(torch::equal(s.weights, torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}})));

  Comparisons pair =
      Comparisons::pairs(torch::tensor({1}, torch::kLong), torch::tensor({2}, torch::kLong));
  pair.conditions = torch::tensor({1}, torch::kLong);
  const ComparisonScores p = nn::conditioned_distances(module, items, pair);
  EXPECT_TRUE(torch::allclose(p.fused_second, torch::tensor({4.0f})));
  EXPECT_FALSE(p.fused_third.defined());
}

// Rows 0 and 2 kept: hinges max(0, 1 − 3 + 0.5) = 0 and max(0, 4 − 2 + 0.5) = 2.5 over 2 rows;
// row 1 (hinge 5.5) left out and without gradient; every row kept is the plain batch mean; none
// kept is 0.
TEST(Hinge, MaskedHingeMeanAveragesOverTheRowsKept) {
  const torch::Tensor close = torch::tensor({1.0f, 6.0f, 4.0f}).requires_grad_(true);
  const torch::Tensor far = torch::tensor({3.0f, 1.0f, 2.0f});
  torch::Tensor v = nn::masked_hinge_mean(close, far, 0.5, torch::tensor({true, false, true}));
  EXPECT_FLOAT_EQ(v.item<float>(), 1.25f);
  v.backward();
  EXPECT_TRUE(torch::equal(close.grad(), torch::tensor({0.0f, 0.0f, 0.5f})));
  EXPECT_FLOAT_EQ(
      nn::masked_hinge_mean(close, far, 0.5, torch::ones({3}, torch::kBool)).item<float>(),
      (0.0f + 5.5f + 2.5f) / 3);
  EXPECT_EQ(nn::masked_hinge_mean(close, far, 0.5, torch::zeros({3}, torch::kBool)).item<float>(),
            0.0f);
}

namespace {

// Two threads stand for two processes: each adds its tensor to the other's, and both leave with
// the total, in the order they call (as every process of a job calls its collectives).
class TwoPartySum {
 public:
  void operator()(at::Tensor& t) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::size_t round = round_;
    if (!waiting_) {
      first_ = t.clone();
      waiting_ = true;
      turned_.wait(lock, [&] { return round_ != round; });
      t.copy_(total_);
    } else {
      total_ = first_ + t;
      t.copy_(total_);
      waiting_ = false;
      ++round_;
      turned_.notify_all();
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable turned_;
  bool waiting_ = false;
  std::size_t round_ = 0;
  at::Tensor first_, total_;
};

struct BatchNormRun {
  at::Tensor y, dx, dweight, dbias, running_mean, running_var;
};

// Forward and backward of `bn` on `x` with the loss Σ y·r.
template <class Module>
BatchNormRun run_batch_norm(Module& bn, const at::Tensor& x, const at::Tensor& r) {
  const at::Tensor input = x.detach().clone().requires_grad_(true);
  const at::Tensor y = bn->forward(input);
  (y * r).sum().backward();
  return {y.detach(),
          input.grad(),
          bn->weight.grad(),
          bn->bias.grad(),
          bn->running_mean.clone(),
          bn->running_var.clone()};
}

double largest(const at::Tensor& t) {
  return t.abs().max().item<double>();
}

}  // namespace

TEST(BatchNorm, UnsynchronisedItIsLibTorchsBatchNorm) {
  torch::manual_seed(1);
  const at::Tensor x = torch::randn({6, 3, 4, 4});
  const at::Tensor r = torch::randn({6, 3, 4, 4});
  torch::nn::BatchNorm2d theirs(3);
  wscsl::nn::BatchNorm2d ours(3);
  const BatchNormRun a = run_batch_norm(theirs, x, r);
  const BatchNormRun b = run_batch_norm(ours, x, r);
  for (const auto& [p, q] : {std::pair{a.y, b.y},
                             {a.dx, b.dx},
                             {a.dweight, b.dweight},
                             {a.running_mean, b.running_mean},
                             {a.running_var, b.running_var}})
    EXPECT_TRUE(torch::equal(p, q));
  EXPECT_EQ(ours->named_buffers().keys(), theirs->named_buffers().keys());
  EXPECT_EQ(ours->named_parameters().keys(), theirs->named_parameters().keys());
}

// Two halves of a batch normalised by two synchronised batch norms give what one batch norm gives
// on the whole batch: outputs, the input's gradient, the summed γ and β gradients, and the
// running statistics.
TEST(BatchNorm, SynchronisedHalvesAreTheWholeBatch) {
  torch::manual_seed(2);
  const at::Tensor x = torch::randn({8, 4, 5, 5}) * 3 + 1;
  const at::Tensor r = torch::randn({8, 4, 5, 5});
  const at::Tensor gamma = torch::rand({4}) + 0.5, beta = torch::randn({4});
  torch::nn::BatchNorm2d whole(4);
  wscsl::nn::BatchNorm2d half[2] = {wscsl::nn::BatchNorm2d(4), wscsl::nn::BatchNorm2d(4)};
  {
    torch::NoGradGuard no_grad;
    whole->weight.copy_(gamma), whole->bias.copy_(beta);
    for (auto& h : half)
      h->weight.copy_(gamma), h->bias.copy_(beta);
  }
  const BatchNormRun expected = run_batch_norm(whole, x, r);

  TwoPartySum sum;
  BatchNormRun parts[2];
  {
    const wscsl::nn::SynchronisedBatchNorm synchronised([&](at::Tensor& t) { sum(t); });
    std::thread other(
        [&] { parts[1] = run_batch_norm(half[1], x.slice(0, 4, 8), r.slice(0, 4, 8)); });
    parts[0] = run_batch_norm(half[0], x.slice(0, 0, 4), r.slice(0, 0, 4));
    other.join();
  }
  // A statistic is a sum over n = 8·5·5 = 200 elements per channel, in float64 here and float32
  // in LibTorch; the backward pass sums as many. Two orders of a float32 sum of n terms differ by
  // at most n·u·Σ|terms| (u = 2^-24); scaled by each tensor's largest element, with 2n for the
  // forward and backward sums the gradients pass through.
  const double bound = 2 * 200 * 5.9604644775390625e-8;
  const auto expect_close = [&](const at::Tensor& ours, const at::Tensor& reference,
                                const char* what) {
    EXPECT_LE(largest(ours - reference), bound * largest(reference)) << what;
  };
  expect_close(torch::cat({parts[0].y, parts[1].y}), expected.y, "y");
  expect_close(torch::cat({parts[0].dx, parts[1].dx}), expected.dx, "dx");
  expect_close(parts[0].dweight + parts[1].dweight, expected.dweight, "dγ");
  expect_close(parts[0].dbias + parts[1].dbias, expected.dbias, "dβ");
  for (const BatchNormRun& part : parts) {
    expect_close(part.running_mean, expected.running_mean, "running mean");
    expect_close(part.running_var, expected.running_var, "running variance");
  }
  // Each half alone has other statistics: the comparison can fail.
  wscsl::nn::BatchNorm2d alone(4);
  EXPECT_GT(largest(run_batch_norm(alone, x.slice(0, 0, 4), r.slice(0, 0, 4)).running_mean -
                    expected.running_mean),
            100 * bound * largest(expected.running_mean));
}

TEST(BatchNorm, EvaluationUsesTheRunningStatisticsWhileSynchronised) {
  wscsl::nn::BatchNorm2d bn(2);
  bn->eval();
  const wscsl::nn::SynchronisedBatchNorm synchronised(
      [](at::Tensor&) { FAIL() << "evaluation must not synchronise"; });
  const at::Tensor x = torch::randn({3, 2, 2, 2});
  EXPECT_TRUE(torch::allclose(bn->forward(x), x / std::sqrt(1 + 1e-5)));
}
