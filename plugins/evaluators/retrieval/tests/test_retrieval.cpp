#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "../src/retrieval.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/pml_comparison.hpp"
#include "wscsl/util/rng.hpp"

using namespace wscsl;
using wscsl::retrieval::ranking_metrics;

namespace {

// One query and five database items whose ranking is relevant, not, relevant, not, not: R = 2.
TEST(RankingMetrics, HandComputedRanking) {
  const torch::Tensor relevant = torch::tensor({{1.0, 0.0, 1.0, 0.0, 0.0}});
  const auto m = ranking_metrics(relevant, {1, 2, 3, 5});
  // AP = (P(1) + P(3)) / R = (1 + 2/3) / 2.
  EXPECT_NEAR(m.map[0].item<double>(), 5.0 / 6.0, 1e-15);
  // NDCG = (1/log2(2) + 1/log2(4)) / (1/log2(2) + 1/log2(3)).
  EXPECT_NEAR(m.ndcg[0].item<double>(), 1.5 / (1.0 + 1.0 / std::log2(3.0)), 1e-15);
  EXPECT_EQ(m.nn[0].item<double>(), 1.0);
  const std::vector<double> precision = {1.0, 0.5, 2.0 / 3.0, 0.4};
  const std::vector<double> recall = {0.5, 0.5, 1.0, 1.0};
  for (std::int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.precision[0][i].item<double>(), precision[static_cast<std::size_t>(i)], 1e-15);
    EXPECT_NEAR(m.recall[0][i].item<double>(), recall[static_cast<std::size_t>(i)], 1e-15);
  }
}

// pytorch-metric-learning's AccuracyCalculator definitions (README): R relevant items in all;
// MAP@R = (1/R) Σ_{n≤R} δ_n P(n), R-precision = hits(R)/R, MRR = 1/(rank of the first relevant).
// The values are ratios of small integers, exact in float64 up to one rounding of each division
// and sum: 1e-15 bounds that.
TEST(RankingMetrics, MapAtRRPrecisionAndMrrComputedByHand) {
  const torch::Tensor relevant = torch::tensor({{1.0, 0.0, 1.0, 0.0, 0.0},
                                                {0.0, 1.0, 1.0, 0.0, 0.0},
                                                {0.0, 0.0, 0.0, 1.0, 1.0},
                                                {0.0, 0.0, 1.0, 1.0, 1.0},
                                                {0.0, 0.0, 0.0, 0.0, 0.0}});
  const auto m = ranking_metrics(relevant, {1});
  // Row 0, R = 2: only rank 1 is within R and relevant: (1/1) / 2; hits(2) = 1.
  EXPECT_NEAR(m.map_at_r[0].item<double>(), 0.5, 1e-15);
  EXPECT_NEAR(m.r_precision[0].item<double>(), 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(m.mrr[0].item<double>(), 1.0);
  // Row 1, R = 2: rank 2 is relevant with P(2) = 1/2: (1/2) / 2; hits(2) = 1; first at 2.
  EXPECT_NEAR(m.map_at_r[1].item<double>(), 0.25, 1e-15);
  EXPECT_NEAR(m.r_precision[1].item<double>(), 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(m.mrr[1].item<double>(), 0.5);
  // Row 2, R = 2: nothing relevant in the top 2, though AP = (1/4 + 2/5) / 2 is not 0.
  EXPECT_EQ(m.map_at_r[2].item<double>(), 0.0);
  EXPECT_EQ(m.r_precision[2].item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(m.mrr[2].item<double>(), 0.25);
  EXPECT_NEAR(m.map[2].item<double>(), (0.25 + 0.4) / 2.0, 1e-15);
  // Row 3, R = 3: rank 3 relevant with P(3) = 1/3: (1/3) / 3; hits(3) = 1.
  EXPECT_NEAR(m.map_at_r[3].item<double>(), 1.0 / 9.0, 1e-15);
  EXPECT_NEAR(m.r_precision[3].item<double>(), 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(m.mrr[3].item<double>(), 1.0 / 3.0, 1e-15);
  // Row 4: no relevant item, no defined value.
  EXPECT_TRUE(std::isnan(m.map_at_r[4].item<double>()));
  EXPECT_TRUE(std::isnan(m.r_precision[4].item<double>()));
  EXPECT_TRUE(std::isnan(m.mrr[4].item<double>()));
}

TEST(RankingMetrics, PerfectAndWorstRankingsAndNoRelevantItem) {
  const torch::Tensor relevant =
      torch::tensor({{1.0, 1.0, 0.0, 0.0}, {0.0, 0.0, 1.0, 1.0}, {0.0, 0.0, 0.0, 0.0}});
  const auto m = ranking_metrics(relevant, {2});
  EXPECT_DOUBLE_EQ(m.map[0].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m.ndcg[0].item<double>(), 1.0);
  // Worst: relevant at ranks 3 and 4: AP = (1/3 + 2/4) / 2.
  EXPECT_DOUBLE_EQ(m.map[1].item<double>(), (1.0 / 3.0 + 0.5) / 2.0);
  EXPECT_DOUBLE_EQ(m.ndcg[1].item<double>(),
                   (1.0 / std::log2(4.0) + 1.0 / std::log2(5.0)) / (1.0 + 1.0 / std::log2(3.0)));
  EXPECT_EQ(m.nn[1].item<double>(), 0.0);
  EXPECT_EQ(m.recall[1][0].item<double>(), 0.0);
  EXPECT_TRUE(std::isnan(m.map[2].item<double>()));
  EXPECT_TRUE(std::isnan(m.ndcg[2].item<double>()));
  EXPECT_TRUE(std::isnan(m.recall[2][0].item<double>()));
  EXPECT_EQ(m.precision[2][0].item<double>(), 0.0);
  // A perfect ranking scores 1 everywhere.
  EXPECT_DOUBLE_EQ(m.map_at_r[0].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m.r_precision[0].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m.mrr[0].item<double>(), 1.0);
}

constexpr std::int64_t kImages = 6;
constexpr std::uint64_t kSeed = 0;

// Six images, one of which (the first of the seeded sample) is the query. Under ψ1 the database
// sits at distances 1..5 from the query in the order `first`; under ψ2 in the order `second`.
// Factor 0 (shape) of the query is 0, factor 1 (size) is 1.
struct Scene {
  EmbeddingTable table;
  std::int64_t query = 0;
};

Scene scene(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& size) {
  Scene s;
  s.query = seeded_permutation(kSeed, kImages)[0];
  // Database rows in ascending order, i.e. the database order of the evaluator.
  std::vector<std::int64_t> database;
  for (std::int64_t r = 0; r < kImages; ++r)
    if (r != s.query) database.push_back(r);
  torch::Tensor psi = torch::zeros({kImages, 2, 1});
  torch::Tensor factors = torch::zeros({kImages, 2}, torch::kLong);
  factors[s.query][0] = 0;
  factors[s.query][1] = 1;
  for (std::size_t i = 0; i < database.size(); ++i) {
    const std::int64_t r = database[i];
    psi[r][0][0] = static_cast<float>(i + 1);                // ψ1: database order
    psi[r][1][0] = static_cast<float>(database.size() - i);  // ψ2: reversed
    factors[r][0] = shape[i];
    factors[r][1] = size[i];
  }
  s.table = wscsl::testing::make_table(Split::Test, psi, {{0, 1, 2}}, {0});
  s.table.factors = factors;
  return s;
}

std::map<std::string, torch::Tensor> published(const std::vector<std::int64_t>& embedding_of,
                                               const std::vector<std::int64_t>& condition_of) {
  return {
      {aligned::assignment_key(aligned::Strategy::Ot), torch::tensor(embedding_of)},
      {aligned::condition_of_embedding_key(aligned::Strategy::Ot), torch::tensor(condition_of)}};
}

EvalReport run(const EmbeddingTable& t, std::map<std::string, torch::Tensor> shared,
               const std::string& options, Supervision supervision = Supervision::Weak) {
  auto e = wscsl::testing::build<Evaluator>("retrieval", "queries = 1\n" + options);
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5}, supervision);
  return wscsl::testing::run_evaluator(*e, module, t, t,
                                       wscsl::testing::dataset_info({"shape", "size"}), &shared);
}

}  // namespace

TEST(Retrieval, RanksTheDatabaseUnderEachConditionsAlignedEmbedding) {
  // Database in ψ1 order: shape relevance 1 0 1 0 0 (as the hand-computed case above); under ψ2
  // (reversed order) the size relevance, listed here in ψ1 order, becomes 1 1 0 0 0.
  const Scene s = scene({0, 2, 0, 3, 1}, {0, 0, 0, 1, 1});
  const EvalReport r = run(s.table, published({0, 1}, {0, 1}), "k = [1, 3]");
  EXPECT_NEAR(wscsl::testing::metric(r, "map/shape"), 5.0 / 6.0, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r, "ndcg/shape"), 1.5 / (1.0 + 1.0 / std::log2(3.0)), 1e-12);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "nn/shape"), 1.0);
  EXPECT_NEAR(wscsl::testing::metric(r, "precision@3/shape"), 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "recall@3/shape"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "map/size"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "ndcg/size"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "recall@1/size"), 0.5);
  EXPECT_NEAR(wscsl::testing::metric(r, "map"), (5.0 / 6.0 + 1.0) / 2.0, 1e-12);
  // Swapping the alignment swaps the embeddings: size under ψ1 has relevance 0 0 0 1 1.
  const EvalReport swapped = run(s.table, published({1, 0}, {1, 0}), "k = [1]");
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(swapped, "map/size"), (1.0 / 4.0 + 2.0 / 5.0) / 2.0);
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.tables[0].rows[0][1], "ψ1");
  EXPECT_EQ(r.tables[0].rows[1][1], "ψ2");
}

TEST(Retrieval, TiesKeepTheDatabaseOrderAndUnknownValuesAreNeverRelevant) {
  Scene s = scene({1, 0, 0, -1, 0}, {1, 1, 1, 1, 1});
  s.table.items.psi.select(1, 0).fill_(3.0);  // ψ1 collapsed: every distance ties
  const EvalReport r = run(s.table, published({0, 1}, {0, 1}), "k = [1]");
  // Ranking = database order: relevance 0 1 1 0 1 → AP = (1/2 + 2/3 + 3/5) / 3.
  EXPECT_NEAR(wscsl::testing::metric(r, "map/shape"), (0.5 + 2.0 / 3.0 + 0.6) / 3.0, 1e-12);
}

TEST(Retrieval, BlocksDoNotChangeTheResult) {
  // Eight images, four queries: one query per block versus all at once.
  const torch::Tensor psi = torch::arange(16, torch::kFloat).reshape({8, 2, 1}).sin();
  EmbeddingTable t = wscsl::testing::make_table(Split::Test, psi, {{0, 1, 2}}, {0});
  t.factors = torch::tensor({0, 1, 1, 0, 2, 1, 0, 2, 1, 1, 0, 0, 2, 2, 1, 0}).reshape({8, 2});
  auto run_with = [&](const std::string& block) {
    auto e = wscsl::testing::build<Evaluator>("retrieval", "queries = 4\nk = [2]\n" + block);
    wscsl::testing::TableModule module(2, 1, {0.5, 0.5});
    auto shared = published({1, 0}, {1, 0});
    return wscsl::testing::run_evaluator(*e, module, t, t, wscsl::testing::dataset_info({"a", "b"}),
                                         &shared);
  };
  const EvalReport whole = run_with(""), blocked = run_with("block_elements = 1");
  ASSERT_EQ(whole.metrics.size(), blocked.metrics.size());
  for (std::size_t i = 0; i < whole.metrics.size(); ++i) {
    EXPECT_EQ(whole.metrics[i].name, blocked.metrics[i].name);
    EXPECT_EQ(whole.metrics[i].value, blocked.metrics[i].value) << whole.metrics[i].name;
  }
}

TEST(Retrieval, NeedsAnAlignmentForWeakModulesAndUsesIdentityForSupervisedOnes) {
  const Scene s = scene({0, 2, 0, 3, 1}, {0, 0, 0, 1, 1});
  try {
    run(s.table, {}, "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("type = \"alignment\" before this one"), std::string::npos)
        << e.what();
  }
  const EvalReport r = run(s.table, {}, "k = [1]", Supervision::Conditioned);
  EXPECT_NEAR(wscsl::testing::metric(r, "map/shape"), 5.0 / 6.0, 1e-12);
  EXPECT_NE(r.tables[0].title.find("identity (supervised module)"), std::string::npos);
}

TEST(Retrieval, RefusesImpossibleSettings) {
  const Scene s = scene({0, 2, 0, 3, 1}, {0, 0, 0, 1, 1});
  EXPECT_THROW(run(s.table, published({0, 1}, {0, 1}), "k = [6]"), Error);  // database of 5
  EmbeddingTable unlabelled = s.table;
  unlabelled.factors = torch::Tensor();
  EXPECT_THROW(run(unlabelled, published({0, 1}, {0, 1}), ""), Error);
  auto many = wscsl::testing::build<Evaluator>("retrieval", "queries = 6");
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5});
  auto shared = published({0, 1}, {0, 1});
  EXPECT_THROW(
      wscsl::testing::run_evaluator(*many, module, s.table, s.table,
                                    wscsl::testing::dataset_info({"shape", "size"}), &shared),
      Error);
  EXPECT_TRUE(
      wscsl::testing::bind_diagnostics(Kind::Evaluator, "retrieval", "k = [0]").has_errors());
}

TEST(Retrieval, NeedsTheAlignmentItReadsAndFactorLabels) {
  auto e = wscsl::testing::build<Evaluator>("retrieval", "alignment = \"exact\"\nk = [5]");
  EXPECT_EQ(e->contract().needed_names(Resource::Alignment), (std::vector<std::string>{"exact"}));
  EXPECT_TRUE(e->contract().needs_resource(Resource::ImageFactors));
  std::vector<std::string> metrics;
  for (const MetricSpec& m : e->contract().metrics)
    metrics.push_back(m.name);
  EXPECT_NE(std::find(metrics.begin(), metrics.end(), "recall@5/{condition}"), metrics.end());
  const Diagnostics d =
      wscsl::testing::bind_diagnostics(Kind::Evaluator, "retrieval", "alignment = \"ott\"");
  EXPECT_NE(d.format().find("did you mean 'ot'?"), std::string::npos) << d.format();
}

namespace {

// Four images on a line, ψ1 = ψ2 = x ∈ {0, 1, 3, 6}; factor a = 0 0 1 1, factor b = 0 for all.
// With queries = "all" each image ranks the other three by |x − x'| (ties in row order):
//   image 0 (x = 0): 1, 2, 3 → a-relevance 1 0 0      image 1 (x = 1): 0, 2, 3 → 1 0 0
//   image 2 (x = 3): 1, then 0 and 3 tied at 3 → 1, 0, 3 → 0 0 1
//   image 3 (x = 6): 2, 1, 0 → 1 0 0
EmbeddingTable line_of_four() {
  const torch::Tensor x = torch::tensor({0.0F, 1.0F, 3.0F, 6.0F});
  EmbeddingTable t = wscsl::testing::make_table(Split::Test, torch::stack({x, x}, 1).unsqueeze(2),
                                                {{0, 1, 2}}, {0});
  t.factors = torch::tensor({0, 0, 0, 0, 1, 0, 1, 0}).reshape({4, 2});
  return t;
}

EvalReport run_all(const EmbeddingTable& t, const std::string& options) {
  auto e = wscsl::testing::build<Evaluator>("retrieval", "queries = \"all\"\n" + options);
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5});
  auto shared = published({0, 1}, {0, 1});
  return wscsl::testing::run_evaluator(*e, module, t, t, wscsl::testing::dataset_info({"a", "b"}),
                                       &shared);
}

}  // namespace

TEST(Retrieval, AllQueriesRankEveryImageAgainstAllTheOthers) {
  const EmbeddingTable t = line_of_four();
  const EvalReport r = run_all(t, "k = [1, 3]");
  // Each image has R = 1 under a. Image 2's only relevant item is at rank 3.
  EXPECT_NEAR(wscsl::testing::metric(r, "map/a"), (3.0 + 1.0 / 3.0) / 4.0, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r, "map_at_r/a"), 0.75, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r, "r_precision/a"), 0.75, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r, "mrr/a"), (3.0 + 1.0 / 3.0) / 4.0, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r, "nn/a"), 0.75, 1e-12);
  EXPECT_NEAR(wscsl::testing::metric(r, "recall@3/a"), 1.0, 1e-12);
  // Under b every other image is relevant: everything is 1.
  for (const char* name : {"map/b", "map_at_r/b", "r_precision/b", "mrr/b"})
    EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, name), 1.0) << name;
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_NE(r.tables[0].title.find("4 queries, 3 database images (every image against all"),
            std::string::npos)
      << r.tables[0].title;
  // One query per block gives exactly the same numbers.
  const EvalReport blocked = run_all(t, "k = [1, 3]\nblock_elements = 1");
  ASSERT_EQ(r.metrics.size(), blocked.metrics.size());
  for (std::size_t i = 0; i < r.metrics.size(); ++i)
    EXPECT_EQ(r.metrics[i].value, blocked.metrics[i].value) << r.metrics[i].name;
  // k = 4 exceeds the 3 other images.
  EXPECT_THROW(run_all(t, "k = [4]"), Error);
}

TEST(Retrieval, QueriesIsACountOrAllAndDeclaresTheImagesItNeeds) {
  auto counted = wscsl::testing::build<Evaluator>("retrieval", "queries = 50\nk = [5, 20]");
  ASSERT_EQ(counted->contract().table_rows.size(), 1u);
  EXPECT_EQ(counted->contract().table_rows[0].rows, 70);
  EXPECT_EQ(counted->contract().table_rows[0].because, "queries = 50 and k = 20");
  auto all = wscsl::testing::build<Evaluator>("retrieval", "queries = \"all\"\nk = [5]");
  EXPECT_EQ(all->contract().table_rows[0].rows, 6);
  EXPECT_EQ(wscsl::testing::build<Evaluator>("retrieval", "")->contract().table_rows[0].rows, 1100);
  for (const char* bad : {"queries = 0", "queries = \"some\"", "queries = -3"}) {
    const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::Evaluator, "retrieval", bad);
    ASSERT_TRUE(d.has_errors()) << bad;
    EXPECT_NE(d.format().find("'queries' must be \"all\" or \"N\""), std::string::npos)
        << d.format();
  }
  std::vector<std::string> metrics;
  for (const MetricSpec& m : all->contract().metrics)
    metrics.push_back(m.name);
  for (const char* name : {"map_at_r/{condition}", "r_precision/{condition}", "mrr/{condition}"})
    EXPECT_NE(std::find(metrics.begin(), metrics.end(), name), metrics.end()) << name;
}

// The same embeddings through PyPI's pytorch-metric-learning (AccuracyCalculator, every image a
// query against all the others, Euclidean distance): ctest runs this as plugin.retrieval.pml with
// WSCSL_PML_PYTHON, a Python that has it (scripts/pml-venv.sh), and reports it skipped without.
TEST(PmlParity, MapAtRRPrecisionMrrAndNnEqualPytorchMetricLearnings) {
  const char* python = std::getenv("WSCSL_PML_PYTHON");
  if (!python || !*python)
    GTEST_SKIP() << "WSCSL_PML_PYTHON is not set (ctest's plugin.retrieval.pml sets it)";
  constexpr std::int64_t kImages = 90;
  torch::Generator generator = at::detail::createCPUGenerator(7);
  // Continuous embeddings: no two distances tie, so both libraries rank alike.
  EmbeddingTable t = wscsl::testing::make_table(
      Split::Test, torch::randn({kImages, 2, 4}, generator), {{0, 1, 2}}, {0});
  // Labels of 5 and of 3 values; a label held by a single image is a query without relevant
  // items, which both leave out.
  t.factors = torch::stack(
      {torch::randint(0, 5, {kImages}, generator), torch::randint(0, 3, {kImages}, generator)}, 1);
  t.factors[0][0] = 9;
  // Condition a reads ψ2, b reads ψ1.
  auto shared = published({1, 0}, {1, 0});
  auto e = wscsl::testing::build<Evaluator>("retrieval", "queries = \"all\"\nk = [1]");
  wscsl::testing::TableModule module(2, 4, {0.5, 0.5});
  const EvalReport r = wscsl::testing::run_evaluator(
      *e, module, t, t, wscsl::testing::dataset_info({"a", "b"}), &shared);

  const wscsl::testing::ScratchDir dir("pml_parity");
  std::ofstream(dir.path() / "conditions.txt") << "a\nb\n";
  const std::vector<std::int64_t> embedding_of = {1, 0};
  for (std::int64_t c = 0; c < 2; ++c) {
    const std::string name = c == 0 ? "a" : "b";
    std::ofstream psi(dir.path() / (name + ".psi.csv")),
        labels(dir.path() / (name + ".labels.csv"));
    const torch::Tensor rows = t.items.psi.select(1, embedding_of[static_cast<std::size_t>(c)]);
    for (std::int64_t i = 0; i < kImages; ++i) {
      for (std::int64_t j = 0; j < rows.size(1); ++j)
        psi << (j ? "," : "") << fmt::format("{:.9g}", rows[i][j].item<float>());
      psi << "\n";
      labels << t.factors[i][c].item<std::int64_t>() << "\n";
    }
  }
  const wscsl::test::PmlComparison c =
      wscsl::test::compare_with_pml(python, WSCSL_PML_SCRIPT, dir.path(), r.metrics);
  ASSERT_TRUE(c.exited) << c.output;
  if (c.status == 77) GTEST_SKIP() << c.output;
  EXPECT_EQ(c.status, 0) << c.output;
  // Both conditions, four metrics each.
  EXPECT_EQ(c.agreed, 8u) << c.output;
}
