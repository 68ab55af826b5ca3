#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/pml_comparison.hpp"

using namespace wscsl;

namespace {

// A dataset whose test split has the given query and candidate lines over `images` images, with
// `values` values per attribute.
struct AttributeMapSetup {
  DatasetInfo info;
  std::unique_ptr<wscsl::testing::FixedDataset> dataset;
  EmbeddingTable table;
};

AttributeMapSetup attribute_map_setup(const torch::Tensor& psi, const torch::Tensor& queries,
                                      const torch::Tensor& candidates,
                                      const std::vector<std::int64_t>& values) {
  AttributeMapSetup s;
  std::vector<std::string> names;
  for (std::size_t a = 0; a < values.size(); ++a)
    names.push_back(std::string(1, static_cast<char>('a' + a)));
  s.info = wscsl::testing::dataset_info(names);
  for (std::size_t a = 0; a < values.size(); ++a)
    for (std::int64_t v = 0; v < values[a]; ++v)
      s.info.conditions[a].values.push_back(std::to_string(v));
  SplitData test;
  test.num_images = psi.size(0);
  test.triplets = torch::empty({0, 3}, torch::kLong);
  test.attribute_queries = AttributeQueries{queries, candidates};
  s.dataset = std::make_unique<wscsl::testing::FixedDataset>(
      s.info, std::map<Split, SplitData>{{Split::Test, test}});
  s.table = wscsl::testing::make_table(Split::Test, psi, {}, {});
  return s;
}

// The released definition, written out: for one attribute, each query sorts the candidates by
// distance (nearest first), labels them 1 where the value is the query's, and scores AP as
// APScorer does — precision at each relevant position within the first k, over all relevant.
double attribute_map_naive(const torch::Tensor& psi, const torch::Tensor& queries,
                           const torch::Tensor& candidates, std::int64_t attribute,
                           std::int64_t embedding, std::int64_t top_k) {
  double sum = 0.0;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < queries.size(0); ++i) {
    if (queries[i][1].item<std::int64_t>() != attribute) continue;
    ++count;
    std::vector<std::pair<double, std::int64_t>> ranked;
    for (std::int64_t j = 0; j < candidates.size(0); ++j) {
      if (candidates[j][1].item<std::int64_t>() != attribute) continue;
      double d = 0.0;
      for (std::int64_t e = 0; e < psi.size(2); ++e) {
        const double diff = psi[queries[i][0].item<std::int64_t>()][embedding][e].item<double>() -
                            psi[candidates[j][0].item<std::int64_t>()][embedding][e].item<double>();
        d += diff * diff;
      }
      ranked.push_back({std::sqrt(d), candidates[j][2].item<std::int64_t>()});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    const std::int64_t value = queries[i][2].item<std::int64_t>();
    std::int64_t relevant = 0;
    for (const auto& r : ranked)
      relevant += r.second == value;
    if (relevant == 0) continue;
    const auto length = static_cast<std::size_t>(
        top_k > 0 ? std::min<std::int64_t>(top_k, static_cast<std::int64_t>(ranked.size()))
                  : static_cast<std::int64_t>(ranked.size()));
    double ap = 0.0;
    std::int64_t hits = 0;
    for (std::size_t n = 0; n < length; ++n)
      if (ranked[n].second == value) ap += static_cast<double>(++hits) / static_cast<double>(n + 1);
    sum += ap / static_cast<double>(relevant);
  }
  return count ? sum / static_cast<double>(count) : 0.0;
}

// Random lines: an attribute and a value drawn per line; line i shows image first_image + i, so
// that no two candidates are the same image at the same distance (a tie each library may break
// its own way).
torch::Tensor attribute_map_lines(std::int64_t lines, std::int64_t first_image,
                                  const std::vector<std::int64_t>& values,
                                  torch::Generator& generator) {
  torch::Tensor out = torch::empty({lines, 3}, torch::kLong);
  for (std::int64_t i = 0; i < lines; ++i) {
    const std::int64_t a =
        torch::randint(0, static_cast<std::int64_t>(values.size()), {1}, generator)
            .item<std::int64_t>();
    out[i][0] = first_image + i;
    out[i][1] = a;
    out[i][2] =
        torch::randint(0, values[static_cast<std::size_t>(a)], {1}, generator).item<std::int64_t>();
  }
  return out;
}

}  // namespace

TEST(AttributeMap, AveragePrecisionOfAHandComputedRanking) {
  // One attribute, one query (image 0, value 1) and four candidates at distances 1, 2, 3, 4 in
  // ψ's first coordinate, the 1st and 3rd relevant: AP = (1/1 + 2/3) / 2; cut at 2: (1/1) / 2.
  const torch::Tensor psi = torch::tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f}).view({5, 1, 1});
  const torch::Tensor queries = torch::tensor({0, 0, 1}, torch::kLong).view({1, 3});
  const torch::Tensor candidates =
      torch::tensor({1, 0, 1, 2, 0, 0, 3, 0, 1, 4, 0, 2}, torch::kLong).view({4, 3});
  AttributeMapSetup s = attribute_map_setup(psi, queries, candidates, {3});
  wscsl::testing::TableModule module(1, 1, {1.0});
  auto whole = wscsl::testing::build<Evaluator>("attribute_map", "");
  const EvalReport r =
      wscsl::testing::run_evaluator(*whole, module, *s.dataset, s.table, s.table, true);
  EXPECT_NEAR(wscsl::testing::metric(r, "map/a"), (1.0 + 2.0 / 3.0) / 2.0, 1e-15);
  EXPECT_NEAR(wscsl::testing::metric(r, "map"), (1.0 + 2.0 / 3.0) / 2.0, 1e-15);
  auto cut = wscsl::testing::build<Evaluator>("attribute_map", "top_k = 2");
  const EvalReport c =
      wscsl::testing::run_evaluator(*cut, module, *s.dataset, s.table, s.table, true);
  EXPECT_NEAR(wscsl::testing::metric(c, "map@2/a"), 0.5, 1e-15);
  // A query whose value no candidate has scores 0 and still counts.
  AttributeMapSetup none =
      attribute_map_setup(psi, torch::tensor({0, 0, 1, 0, 0, 0}, torch::kLong).view({2, 3}),
                          torch::tensor({1, 0, 0, 2, 0, 0}, torch::kLong).view({2, 3}), {3});
  const EvalReport n =
      wscsl::testing::run_evaluator(*whole, module, *none.dataset, none.table, none.table, true);
  EXPECT_NEAR(wscsl::testing::metric(n, "map/a"), (0.0 + 1.0) / 2.0, 1e-15);
}

TEST(AttributeMap, EqualsTheReleasedDefinitionAndWeighsAttributesByQueries) {
  torch::Generator generator = at::detail::createCPUGenerator(3);
  const std::vector<std::int64_t> values = {3, 5, 2};
  // Images 0-39 are the queries, 40-189 the candidates; continuous ψ, so no distances tie.
  const torch::Tensor psi = torch::randn({190, 3, 4}, generator);
  const torch::Tensor queries = attribute_map_lines(40, 0, values, generator);
  const torch::Tensor candidates = attribute_map_lines(150, 40, values, generator);
  AttributeMapSetup s = attribute_map_setup(psi, queries, candidates, values);
  wscsl::testing::TableModule module(3, 4, {1.0, 1.0, 1.0}, Supervision::Conditioned);
  for (std::int64_t top_k : {0, 7}) {
    // One query at a time (block_elements = 1) and all at once give the same numbers.
    for (const char* block : {"", "block_elements = 1"}) {
      auto e = wscsl::testing::build<Evaluator>("attribute_map",
                                                fmt::format("top_k = {}\n{}", top_k, block));
      const EvalReport r =
          wscsl::testing::run_evaluator(*e, module, *s.dataset, s.table, s.table, true);
      const std::string stem = top_k ? fmt::format("map@{}", top_k) : "map";
      double weighted = 0.0;
      for (std::int64_t a = 0; a < 3; ++a) {
        const double naive = attribute_map_naive(psi, queries, candidates, a, a, top_k);
        const std::string name = stem + "/" + s.info.conditions[static_cast<std::size_t>(a)].name;
        // Both sum at most 150 precisions in float64 over the same ranking.
        EXPECT_NEAR(wscsl::testing::metric(r, name), naive, 150 * 0x1p-52) << name;
        weighted += naive * queries.select(1, 1).eq(a).sum().item<double>();
      }
      EXPECT_NEAR(wscsl::testing::metric(r, stem), weighted / 40.0, 150 * 0x1p-52);
    }
  }
}

TEST(AttributeMap, DeclaresItsNeedsAndNamesTheCutOff) {
  auto e = wscsl::testing::build<Evaluator>("attribute_map", "top_k = 50");
  std::vector<std::string> metrics;
  for (const MetricSpec& m : e->contract().metrics)
    metrics.push_back(m.name);
  EXPECT_EQ(metrics, (std::vector<std::string>{"map@50", "map@50/{condition}"}));
  EXPECT_TRUE(e->contract().needs_resource(Resource::AttributeQueries));
  EXPECT_TRUE(e->contract().needs_resource(Resource::QueryLines));
}

// The same embeddings through PyPI's pytorch-metric-learning (AccuracyCalculator's
// mean_average_precision over every candidate, Euclidean distance), where the two definitions
// coincide: every query has a relevant candidate (pml leaves the others out; the release scores
// them 0). ctest runs this as plugin.attribute_map.pml with WSCSL_PML_PYTHON, a Python that has
// it (scripts/pml-venv.sh), and reports it skipped without, as plugin.retrieval.pml.
TEST(AttributeMap, PmlParity) {
  const char* python = std::getenv("WSCSL_PML_PYTHON");
  const char* script = std::getenv("WSCSL_MAP_PML_SCRIPT");
  if (!python || !*python || !script || !*script)
    GTEST_SKIP() << "WSCSL_PML_PYTHON is not set (ctest's plugin.attribute_map.pml sets it)";
  torch::Generator generator = at::detail::createCPUGenerator(11);
  const std::vector<std::int64_t> values = {3, 2};
  const torch::Tensor psi = torch::randn({130, 2, 5}, generator);
  const torch::Tensor queries = attribute_map_lines(30, 0, values, generator);
  // Every value of every attribute among the candidates: no query lacks a relevant one.
  torch::Tensor candidates = attribute_map_lines(100, 30, values, generator);
  for (std::int64_t v = 0; v < 3; ++v) {
    candidates[v][1] = 0, candidates[v][2] = v;
    candidates[3 + v][1] = 1, candidates[3 + v][2] = v % 2;
  }
  AttributeMapSetup s = attribute_map_setup(psi, queries, candidates, values);
  wscsl::testing::TableModule module(2, 5, {1.0, 1.0}, Supervision::Conditioned);
  auto e = wscsl::testing::build<Evaluator>("attribute_map", "");
  const EvalReport r =
      wscsl::testing::run_evaluator(*e, module, *s.dataset, s.table, s.table, true);

  const wscsl::testing::ScratchDir dir("attribute_map_pml");
  std::ofstream(dir.path() / "attributes.txt") << "a\nb\n";
  for (std::int64_t a = 0; a < 2; ++a) {
    const std::string name = a == 0 ? "a" : "b";
    for (const auto& [lines, role] : {std::pair{queries, std::string("query")},
                                      std::pair{candidates, std::string("candidate")}}) {
      std::ofstream rows(dir.path() / (name + "." + role + ".csv")),
          labels(dir.path() / (name + "." + role + "_labels.csv"));
      for (std::int64_t i = 0; i < lines.size(0); ++i) {
        if (lines[i][1].item<std::int64_t>() != a) continue;
        const torch::Tensor v = psi[lines[i][0].item<std::int64_t>()][a];
        for (std::int64_t j = 0; j < v.size(0); ++j)
          rows << (j ? "," : "") << fmt::format("{:.9g}", v[j].item<float>());
        rows << "\n";
        labels << lines[i][2].item<std::int64_t>() << "\n";
      }
    }
  }
  const wscsl::test::PmlComparison c =
      wscsl::test::compare_with_pml(python, script, dir.path(), r.metrics);
  ASSERT_TRUE(c.exited) << c.output;
  if (c.status == 77) GTEST_SKIP() << c.output;
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(c.agreed, 2u) << c.output;
}
