#include <gtest/gtest.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

// Builds a table in which embedding l is right on a fraction accuracy[c][l] of the triplets of
// condition c. Each triplet gets its own three images: anchor at 0, close at 1, far at 2 under
// the embeddings that are right, and far at 0.5 under the others.
EmbeddingTable table_with_accuracy(Split split,
                                   const std::vector<std::vector<int>>& correct_of_four) {
  const std::size_t conditions = correct_of_four.size(), embeddings = correct_of_four[0].size();
  std::vector<std::array<std::int64_t, 3>> triplets;
  std::vector<std::int64_t> labels;
  std::vector<float> values;
  std::int64_t row = 0;
  for (std::size_t c = 0; c < conditions; ++c) {
    for (int t = 0; t < 4; ++t) {
      for (std::size_t l = 0; l < embeddings; ++l)
        values.push_back(0.0f);  // anchor
      for (std::size_t l = 0; l < embeddings; ++l)
        values.push_back(1.0f);  // close
      for (std::size_t l = 0; l < embeddings; ++l)
        values.push_back(t < correct_of_four[c][l] ? 2.0f : 0.5f);  // far
      triplets.push_back({row, row + 1, row + 2});
      labels.push_back(static_cast<std::int64_t>(c));
      row += 3;
    }
  }
  const torch::Tensor psi =
      torch::tensor(values).reshape({row, static_cast<std::int64_t>(embeddings), 1});
  return wscsl::testing::make_table(split, psi, triplets, labels);
}

struct Result {
  EvalReport report;
  std::map<std::string, torch::Tensor> shared;
};

Result run_alignment(const EmbeddingTable& fit, const EmbeddingTable& target,
                     std::size_t embeddings, const std::string& options = "") {
  auto e = wscsl::testing::build<Evaluator>("alignment", options);
  const std::size_t conditions =
      static_cast<std::size_t>(std::get<0>(at::_unique(target.triplets.conditions)).size(0));
  std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  names.resize(conditions);
  const DatasetInfo info = wscsl::testing::dataset_info(names);
  wscsl::testing::TableModule module(static_cast<std::int64_t>(embeddings), 1,
                                     std::vector<double>(embeddings, 1.0 / embeddings));
  Result r;
  r.report = wscsl::testing::run_evaluator(*e, module, fit, target, info, &r.shared);
  return r;
}

}  // namespace

TEST(Alignment, KnownCostMatrixGivesKnownGreedyOtAndExactAccuracies) {
  // Accuracy (out of 4 triplets) of embedding l on condition c. Greedy picks ψ1 for both a and b;
  // the one-to-one optimum is a→ψ2 (3/4), b→ψ1 (4/4), c→ψ3 (2/4): total 2.25 vs 2.0 for a→ψ1.
  const std::vector<std::vector<int>> acc = {{4, 3, 0}, {4, 1, 0}, {1, 0, 2}};
  const EmbeddingTable t = table_with_accuracy(Split::Test, acc);
  const Result r = run_alignment(t, t, 3);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "gr_accuracy"), (1.0 + 1.0 + 0.5) / 3);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "exact_accuracy"), (0.75 + 1.0 + 0.5) / 3);
  // reg 1e-3 and POT's 1000 iterations leave the plan within ~1e-4 of the permutation.
  EXPECT_NEAR(wscsl::testing::metric(r.report, "ot_accuracy"), (0.75 + 1.0 + 0.5) / 3, 1e-3);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "ot_accuracy/a"), 0.75, 1e-3);
  EXPECT_TRUE(torch::equal(r.shared.at("alignment.exact_assignment"),
                           torch::tensor({1, 0, 2}, torch::kLong)));
  EXPECT_TRUE(
      torch::equal(r.shared.at("alignment.ot_assignment"), torch::tensor({1, 0, 2}, torch::kLong)));
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "gr_accuracy/a"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "exact_accuracy/a"), 0.75);
  EXPECT_TRUE(torch::equal(r.shared.at("alignment.greedy_assignment"),
                           torch::tensor({0, 0, 2}, torch::kLong)));
  EXPECT_TRUE(torch::equal(r.shared.at("alignment.exact_condition_of_embedding"),
                           torch::tensor({1, 0, 2}, torch::kLong)));
  EXPECT_TRUE(torch::equal(r.shared.at("alignment.greedy_condition_of_embedding"),
                           torch::tensor({0, -1, 2}, torch::kLong)));
  ASSERT_EQ(r.report.tables.size(), 3u);
  EXPECT_EQ(r.report.tables[0].rows[0],
            (std::vector<std::string>{"a", "1.0000", "0.7500", "0.0000"}));
  EXPECT_EQ(r.report.tables[2].rows[0], (std::vector<std::string>{"ψ1", "a, b", "b", "b"}));
  EXPECT_EQ(r.report.tables[2].rows[1], (std::vector<std::string>{"ψ2", "-", "a", "a"}));
}

TEST(Alignment, RectangularThreeConditionsFiveEmbeddings) {
  // Each condition carries 1/3 of the mass, each embedding 1/5: in units of 1/15, a condition
  // has 5 units and an embedding holds 3. a is perfect on ψ1, ψ2 and b on ψ3, ψ4 (6 units each
  // for their 5); c is perfect on ψ5 only (3 units) and at 2/4 elsewhere, so its other 2 units go
  // to the spare capacity left by a and b at cost ½: exact accuracy of c = 1 − (2/5)·½ = 0.8.
  const std::vector<std::vector<int>> acc = {{4, 4, 0, 0, 0}, {0, 0, 4, 4, 0}, {2, 2, 2, 2, 4}};
  const EmbeddingTable t = table_with_accuracy(Split::Test, acc);
  const Result r = run_alignment(t, t, 5);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "exact_accuracy"), 14.0 / 15.0, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "exact_accuracy/a"), 1.0, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "exact_accuracy/b"), 1.0, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "exact_accuracy/c"), 0.8, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "ot_accuracy"), 14.0 / 15.0, 1e-3);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "ot_accuracy/c"), 0.8, 1e-3);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "gr_accuracy"), 1.0);
  // The plan keeps its uniform marginals.
  const torch::Tensor plan = r.shared.at("alignment.exact_plan");
  EXPECT_TRUE(torch::allclose(plan.sum(1), torch::full({3}, 1.0 / 3, torch::kDouble)));
  EXPECT_TRUE(torch::allclose(plan.sum(0), torch::full({5}, 1.0 / 5, torch::kDouble)));
  for (const std::string strategy : {"ot", "exact"}) {
    EXPECT_TRUE(torch::equal(r.shared.at("alignment." + strategy + "_condition_of_embedding"),
                             torch::tensor({0, 0, 1, 1, 2}, torch::kLong)))
        << strategy;
    EXPECT_EQ(r.shared.at("alignment." + strategy + "_assignment")[2].item<std::int64_t>(), 4);
  }
  EXPECT_EQ(r.report.tables[2].rows[4], (std::vector<std::string>{"ψ5", "c", "c", "c"}));
}

TEST(Alignment, MoreConditionsThanEmbeddingsShareThem) {
  // Three conditions, two embeddings: ψ1 serves a, ψ2 serves b; c (perfect on ψ2, ¾ on ψ1) is
  // split between them by the exact plan (units of 1/6: rows 2, columns 3).
  const std::vector<std::vector<int>> acc = {{4, 0}, {0, 4}, {3, 4}};
  const EmbeddingTable t = table_with_accuracy(Split::Test, acc);
  const Result r = run_alignment(t, t, 2);
  // a: 2 units on ψ1, b: 2 units on ψ2, c: 1 unit on ψ1 (cost ¼) and 1 on ψ2 (cost 0).
  EXPECT_NEAR(wscsl::testing::metric(r.report, "exact_accuracy/c"), 1.0 - 0.5 * 0.25, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "exact_accuracy"), 1.0 - 0.25 / 6, 1e-12);
}

TEST(Alignment, FitsOnOneSplitAndAppliesToAnother) {
  // On the validation split a goes with ψ1; on the test split ψ2 would be better for a, but the
  // OT and exact assignments are those fitted on validation. Greedy follows `greedy_fit`.
  const EmbeddingTable val = table_with_accuracy(Split::Val, {{4, 0}, {0, 4}});
  const EmbeddingTable test = table_with_accuracy(Split::Test, {{1, 3}, {2, 4}});
  const Result r = run_alignment(val, test, 2);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "exact_accuracy"), (0.25 + 1.0) / 2);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "ot_accuracy"), (0.25 + 1.0) / 2, 1e-3);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "gr_accuracy"),
                   (0.75 + 1.0) / 2);  // chosen on test
  const Result fitted = run_alignment(val, test, 2, "greedy_fit = \"fit\"");
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(fitted.report, "gr_accuracy"), (0.25 + 1.0) / 2);
}

// Condition a is found by ψ1 (4 of 4), b by ψ2 — which is then collapsed: every distance ties.
namespace {

EmbeddingTable with_second_embedding_collapsed() {
  const EmbeddingTable t = table_with_accuracy(Split::Test, {{4, 0}, {0, 4}});
  EmbeddingTable collapsed = t;
  collapsed.items.psi = t.items.psi.clone();
  collapsed.items.psi.select(1, 1).fill_(7.0);
  collapsed.items.phi = collapsed.items.psi.reshape({collapsed.items.psi.size(0), 2});
  return collapsed;
}

}  // namespace

TEST(Alignment, ACollapsedEmbeddingCountsHalf) {
  // Every distance ties under a collapsed embedding: accuracy 0.5 on every condition.
  const EmbeddingTable collapsed = with_second_embedding_collapsed();
  const Result r = run_alignment(collapsed, collapsed, 2);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "exact_accuracy"), (1.0 + 0.5) / 2);
  EXPECT_NEAR(wscsl::testing::metric(r.report, "ot_accuracy"), (1.0 + 0.5) / 2, 1e-3);
}

TEST(Alignment, UnderStrictTiesACollapsedEmbeddingCountsNothing) {
  const EmbeddingTable collapsed = with_second_embedding_collapsed();
  const Result r = run_alignment(collapsed, collapsed, 2, "ties = \"strict\"");
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r.report, "exact_accuracy"), (1.0 + 0.0) / 2);
}

TEST(Alignment, NeedsConditionLabels) {
  EmbeddingTable t = table_with_accuracy(Split::Test, {{4, 0}, {0, 4}});
  auto e = wscsl::testing::build<Evaluator>("alignment");
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5});
  t.triplets.conditions = torch::Tensor();
  EXPECT_THROW(
      wscsl::testing::run_evaluator(*e, module, t, t, wscsl::testing::dataset_info({"a", "b"})),
      Error);
}

TEST(Alignment, ProvidesEveryStrategyAndNeedsTheTripletsConditions) {
  auto e = wscsl::testing::build<Evaluator>("alignment");
  for (const char* strategy : {"ot", "exact", "greedy"})
    EXPECT_TRUE(e->contract().provides_resource(Resource::Alignment, strategy)) << strategy;
  EXPECT_TRUE(e->contract().needs_resource(Resource::TripletConditions));
  // A split lacking a condition's triplets is refused by `wscsl check`.
  EXPECT_TRUE(e->contract().needs_resource(Resource::ConditionTriplets));
  const Diagnostics d =
      wscsl::testing::bind_diagnostics(Kind::Evaluator, "alignment", "greedy_fit = \"val\"");
  EXPECT_NE(d.format().find("valid choices: target, fit"), std::string::npos) << d.format();
}
