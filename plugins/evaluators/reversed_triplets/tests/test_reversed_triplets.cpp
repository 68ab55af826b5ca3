#include <gtest/gtest.h>

#include <fmt/format.h>

#include "../src/reversed_triplets.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/util/rng.hpp"

using namespace wscsl;

namespace {

// Images on a line at 0, 1, 3, 3 (one embedding). Triplet by triplet, original and reversed:
// (0,1,2): 1 < 3 valid, reversed 3 > 1 not; (0,2,1): not, reversed valid;
// (1,2,3): a tie either way (½); (2,3,0): 0 < 3 valid, reversed not.
EmbeddingTable line_table() {
  const torch::Tensor psi = torch::tensor({0.0, 1.0, 3.0, 3.0}).reshape({4, 1, 1});
  return wscsl::testing::make_table(Split::Test, psi, {{0, 1, 2}, {0, 2, 1}, {1, 2, 3}, {2, 3, 0}},
                                    {0, 0, 1, 1});
}
const std::vector<double> kOriginal = {1.0, 0.0, 0.5, 1.0};
const std::vector<double> kReversed = {0.0, 1.0, 0.5, 0.0};

// A "lazy" module that explains every triplet: it weights the embedding under which the triplet's
// second item is nearer, so both a triplet and its reversed version look valid.
class Lazy final : public ConditionModule {
 public:
  std::int64_t num_embeddings() const override { return 2; }
  std::int64_t output_dim() const override { return 1; }

 protected:
  torch::Tensor embed_impl(const wscsl::EmbedInput& input) override {
    return input.phi.reshape({-1, 2, 1});
  }
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& c) override {
    const ComparedItems in = gather(items, c);
    ComparisonScores s;
    s.second_distances = distances(in.first.psi, in.second.psi);
    s.third_distances = distances(in.first.psi, in.third.psi);
    s.weights =
        torch::one_hot((s.second_distances - s.third_distances).argmin(1), 2).to(torch::kFloat);
    s.fused_second = (s.weights * s.second_distances).sum(1);
    s.fused_third = (s.weights * s.third_distances).sum(1);
    return s;
  }
};

// ψ1 is the line (0, 1, 3, 3), ψ2 another line (0, 3, 1, 6) that orders most pairs the other way.
EmbeddingTable two_lines_table() {
  const torch::Tensor line = torch::tensor({0.0, 1.0, 3.0, 3.0});
  const torch::Tensor other = torch::tensor({0.0, 3.0, 1.0, 6.0});
  EmbeddingTable t = line_table();
  t.items.psi = torch::stack({line, other}, 1).reshape({4, 2, 1}).to(torch::kFloat);
  t.items.phi = t.items.psi.reshape({4, 2});
  return t;
}

EvalReport run(ConditionModule& m, const EmbeddingTable& t, const std::string& options = "") {
  auto e = wscsl::testing::build<Evaluator>("reversed_triplets", options);
  return wscsl::testing::run_evaluator(*e, m, t, t,
                                       wscsl::testing::dataset_info({"shape", "size"}));
}

}  // namespace

TEST(ReversedTriplets, ProportionsOfOriginalAndReversedTripletsPredictedValid) {
  wscsl::testing::TableModule module(1, 1, {1.0});
  const EvalReport r = run(module, line_table());
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "original_valid"), 2.5 / 4);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "reversed_valid"), 1.5 / 4);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "original_valid/shape"), 0.5);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "reversed_valid/shape"), 0.5);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "original_valid/size"), 0.75);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "reversed_valid/size"), 0.25);
}

// A split without triplets is refused by `wscsl check` (host/src/evaluation/split_check.cpp).
TEST(ReversedTriplets, NeedsTripletsInTheSplitsItEvaluates) {
  EXPECT_TRUE(wscsl::testing::build<Evaluator>("reversed_triplets")
                  ->contract()
                  .needs_resource(Resource::SplitTriplets));
}

TEST(ReversedTriplets, ALazyModuleCallsReversedTripletsValidToo) {
  // ψ1 is the line (0, 1, 3, 3), ψ2 another line (0, 3, 1, 6) that orders most pairs the other
  // way. Close minus far, (ψ1, ψ2), for each triplet and its reversed version:
  // (0,1,2): (−2, +2) and (+2, −2); (0,2,1): the same swapped; (2,3,0): (−3, +4) and (+3, −4):
  // valid both ways. (1,2,3): (0, −1) valid, reversed (0, +1) picks the tie under ψ1: ½.
  const EmbeddingTable t = two_lines_table();
  Lazy lazy;
  const EvalReport r = run(lazy, t);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "original_valid"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "reversed_valid"), 3.5 / 4);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "sweep_valid@1"), 3.5 / 4);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "sweep_accuracy@1"), 0.5 / 4);
}

TEST(ReversedTriplets, SweepPointCountsEachMixedSetExactly) {
  const std::vector<std::int64_t> order = {2, 0, 3, 1};
  const auto none = reversed_triplets::sweep_point(kOriginal, kReversed, order, 0.0);
  EXPECT_EQ(none.reversed, 0);
  EXPECT_DOUBLE_EQ(none.valid, 2.5 / 4);
  EXPECT_DOUBLE_EQ(none.accuracy, 2.5 / 4);
  // Half: triplets 2 and 0 reversed → valid 0.5 + 0 (reversed) and 0 + 1 (kept): 1.5 / 4;
  // right: 1 − 0.5, 1 − 0 for the reversed, 0 and 1 for the kept ones: 2.5 / 4.
  const auto half = reversed_triplets::sweep_point(kOriginal, kReversed, order, 0.5);
  EXPECT_EQ(half.reversed, 2);
  EXPECT_DOUBLE_EQ(half.valid, 1.5 / 4);
  EXPECT_DOUBLE_EQ(half.accuracy, 2.5 / 4);
  const auto all = reversed_triplets::sweep_point(kOriginal, kReversed, order, 1.0);
  EXPECT_DOUBLE_EQ(all.valid, 1.5 / 4);
  EXPECT_DOUBLE_EQ(all.accuracy, 2.5 / 4);
  // 0.3 of 4 rounds to one reversed triplet (triplet 2: ½ either way).
  const auto some = reversed_triplets::sweep_point(kOriginal, kReversed, order, 0.3);
  EXPECT_EQ(some.reversed, 1);
  EXPECT_DOUBLE_EQ(some.valid, 2.5 / 4);
}

TEST(ReversedTriplets, TheEvaluatorsSweepReversesTheSeededPermutationsFirstTriplets) {
  wscsl::testing::TableModule module(1, 1, {1.0});
  const EvalReport r = run(module, line_table(), "fractions = [0.25, 0.75]\nseed = 5");
  const std::vector<std::int64_t> order = seeded_permutation(5, 4);
  for (double f : {0.25, 0.75}) {
    const auto expected = reversed_triplets::sweep_point(kOriginal, kReversed, order, f);
    EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, fmt::format("sweep_valid@{:g}", f)), expected.valid);
    EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, fmt::format("sweep_accuracy@{:g}", f)),
                     expected.accuracy);
  }
  ASSERT_EQ(r.tables.size(), 2u);
  EXPECT_EQ(r.tables[1].rows.size(), 2u);
}

TEST(ReversedTriplets, RejectsFractionsOutsideTheUnitInterval) {
  EXPECT_TRUE(wscsl::testing::bind_diagnostics(Kind::Evaluator, "reversed_triplets",
                                               "fractions = [0.5, 1.5]")
                  .has_errors());
}

TEST(ReversedTriplets, RejectsAFractionListedTwice) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::Evaluator, "reversed_triplets",
                                                         "fractions = [0.5, 0.50, 1.0]");
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_NE(d.all()[0].message.find("the fraction 0.5 is listed twice"), std::string::npos)
      << d.format();
}

// Under strict ties the tie of triplet (1,2,3) under ψ1 — valid ½ both ways before — is invalid
// when reversed, so 3 of 4 reversed triplets are called valid.
TEST(ReversedTriplets, StrictTiesAreInvalid) {
  const EmbeddingTable t = two_lines_table();
  Lazy lazy;
  const EvalReport r = run(lazy, t, "ties = \"strict\"");
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "original_valid"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "reversed_valid"), 3.0 / 4);
}
