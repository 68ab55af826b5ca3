#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

// Four images on a line (one embedding, one dimension) and hand-picked triplets:
// positions 0, 1, 3, 3.
EmbeddingTable line_table() {
  const torch::Tensor psi = torch::tensor({0.0, 1.0, 3.0, 3.0}).reshape({4, 1, 1});
  return wscsl::testing::make_table(Split::Test, psi,
                                    {{0, 1, 2},   // d(0,1)=1 < d(0,2)=3: correct
                                     {0, 2, 1},   // reversed: wrong
                                     {1, 2, 3},   // d(1,2)=2 == d(1,3)=2: a tie, half
                                     {2, 3, 0}},  // 0 < 3: correct
                                    {0, 0, 1, 1});
}

EvalReport run_accuracy(Evaluator& e, ConditionModule& m, const EmbeddingTable& table) {
  return wscsl::testing::run_evaluator(e, m, table, table,
                                       wscsl::testing::dataset_info({"shape", "size"}));
}

}  // namespace

TEST(TripletAccuracy, CountsTiesAsHalfOverallAndPerCondition) {
  auto e = wscsl::testing::build<Evaluator>("triplet_accuracy");
  wscsl::testing::TableModule module(1, 1, {1.0});
  const EvalReport r = run_accuracy(*e, module, line_table());
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "accuracy"), 2.5 / 4);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "accuracy/shape"), 0.5);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "accuracy/size"), 0.75);
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.tables[0].rows.back(), (std::vector<std::string>{"all", "0.6250", "4"}));
}

// The papers' rule: close < far strictly, so the tie of triplet 3 counts as wrong.
TEST(TripletAccuracy, StrictTiesCountAsWrong) {
  auto e = wscsl::testing::build<Evaluator>("triplet_accuracy", "ties = \"strict\"");
  wscsl::testing::TableModule module(1, 1, {1.0});
  const EvalReport r = run_accuracy(*e, module, line_table());
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "accuracy"), 2.0 / 4);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "accuracy/shape"), 0.5);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "accuracy/size"), 0.5);
  // A collapsed embedding, all ties: chance (0.5) under "half", nothing under "strict".
  const EmbeddingTable line = line_table();
  EmbeddingTable collapsed = line;
  collapsed.items.psi = torch::zeros_like(line.items.psi);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(run_accuracy(*e, module, collapsed), "accuracy"), 0.0);
}

TEST(TripletAccuracy, UsesTheModulesOwnFusedPrediction) {
  // Two embeddings: the first puts everything at 0 (all ties), the second is the line above.
  // Weights (0.5, 0.5) fuse them into half the line distances: same decisions as the line.
  const torch::Tensor line = torch::tensor({0.0, 1.0, 3.0, 3.0});
  const torch::Tensor psi = torch::stack({torch::zeros({4}), line}, 1).reshape({4, 2, 1});
  EmbeddingTable table = line_table();
  table.items.psi = psi.to(torch::kFloat);
  table.items.phi = table.items.psi.reshape({4, 2});
  auto e = wscsl::testing::build<Evaluator>("triplet_accuracy");
  wscsl::testing::TableModule fused(2, 1, {0.5, 0.5});
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(run_accuracy(*e, fused, table), "accuracy"), 2.5 / 4);
  wscsl::testing::TableModule collapsed(2, 1, {1.0, 0.0});
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(run_accuracy(*e, collapsed, table), "accuracy"), 0.5);
}

// A split without triplets is refused by `wscsl check` (host/src/evaluation/split_check.cpp).
TEST(TripletAccuracy, NeedsTripletsInTheSplitsItEvaluates) {
  EXPECT_TRUE(wscsl::testing::build<Evaluator>("triplet_accuracy")
                  ->contract()
                  .needs_resource(Resource::SplitTriplets));
}

TEST(TripletAccuracy, ConditionGivenNeedsConditions) {
  auto e = wscsl::testing::build<Evaluator>("triplet_accuracy", "mode = \"condition_given\"");
  wscsl::testing::TableModule module(1, 1, {1.0});
  EmbeddingTable table = line_table();
  table.triplets.conditions = torch::Tensor();
  EXPECT_THROW(run_accuracy(*e, module, table), Error);
}
