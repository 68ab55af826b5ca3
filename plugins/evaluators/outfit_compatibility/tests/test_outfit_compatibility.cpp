#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wscsl/eval/outfit_scoring.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/outfit_eval_fixtures.hpp"

using namespace wscsl;
using wscsl::testing::ConditionPicker;
using wscsl::testing::id_lists;
using wscsl::testing::metric;
using wscsl::testing::outfit_table;
using wscsl::testing::three_type_pair_conditions;

namespace {

OutfitData outfits(const torch::Tensor& types, const std::vector<std::vector<std::int64_t>>& lines,
                   const std::vector<std::int64_t>& labels) {
  OutfitData o;
  o.item_types = types;
  o.type_pair_conditions = three_type_pair_conditions();
  o.compatibility = {id_lists(lines), torch::tensor(labels, torch::kLong)};
  o.blanks = {id_lists({}), torch::zeros({0, 4}, torch::kLong), torch::zeros({0}, torch::kLong),
              torch::zeros({0}, torch::kLong)};
  return o;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// Six items on a line (one embedding of one dimension) and six lines whose mean pair distances
// are worked out by hand; lines 1 (compatible) and 6 (not) tie.
TEST(OutfitCompatibility, HandComputedMeansAndAucWithATie) {
  const torch::Tensor psi = torch::tensor({0.0, 1.0, 3.0, 3.0, 10.0, 0.5}).reshape({6, 1, 1});
  auto data = wscsl::testing::three_type_outfit_dataset(
      6, outfits(torch::full({6}, -1, torch::kLong),
                 {{0, 1}, {0, 1, 5}, {2, 3, 4}, {0, 2}, {2, 4}, {1, 0}}, {1, 1, 0, 0, 1, 0}));
  // Mean distances 1, (1 + 0.5 + 0.5)/3, (0 + 7 + 7)/3, 3, 7, 1 → scores 1 − d:
  // positives 0, 1/3, −6; negatives −11/3, −2, 0. Of the 9 (positive, negative) pairs, 0 beats
  // two and ties one, 1/3 beats three, −6 none: (2.5 + 3) / 9.
  auto e = wscsl::testing::build<Evaluator>("outfit_compatibility");
  wscsl::testing::TableModule weak(1, 1, {1.0});
  const EmbeddingTable t = outfit_table(psi);
  wscsl::testing::ScratchDir dir("outfit_compat");
  const EvalReport r = wscsl::testing::run_evaluator(*e, weak, data, t, t, true, dir.path());
  EXPECT_DOUBLE_EQ(metric(r, "auc"), 5.5 / 9);
  ASSERT_EQ(r.artifacts.size(), 1u);
  EXPECT_EQ(read_text(dir.path() / "outfit_compatibility.tsv"),
            "line\tlabel\titems\tmean_distance\tscore\n"
            "1\t1\t2\t1\t0\n"
            "2\t1\t3\t0.666666667\t0.333333333\n"
            "3\t0\t3\t4.66666667\t-3.66666667\n"
            "4\t0\t2\t3\t-2\n"
            "5\t1\t2\t7\t-6\n"
            "6\t0\t2\t1\t0\n");
  // Validation: the same metric, nothing written.
  std::filesystem::remove(dir.path() / "outfit_compatibility.tsv");
  const EvalReport v = wscsl::testing::run_evaluator(*e, weak, data, t, t, false, dir.path());
  EXPECT_DOUBLE_EQ(metric(v, "auc"), 5.5 / 9);
  EXPECT_TRUE(v.artifacts.empty());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "outfit_compatibility.tsv"));
}

// sklearn's roc_auc_score on cases worked out from its definition (trapezoids; a tie between a
// positive and a negative counts half).
TEST(OutfitCompatibility, RocAucCountsTiesAsSklearnDoes) {
  const auto auc = [](std::vector<double> s, std::vector<std::int64_t> y) {
    return outfit::roc_auc(torch::tensor(s, torch::kDouble), torch::tensor(y, torch::kLong));
  };
  EXPECT_DOUBLE_EQ(auc({0.1, 0.4, 0.35, 0.8}, {0, 0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(auc({0.5, 0.5, 0.5, 0.5}, {0, 1, 0, 1}), 0.5);
  EXPECT_DOUBLE_EQ(auc({0.3, 0.3, 0.7, 0.1, 0.3}, {1, 0, 1, 0, 1}), 5.0 / 6);
  EXPECT_DOUBLE_EQ(auc({3, 2, 1}, {1, 1, 0}), 1.0);
  EXPECT_DOUBLE_EQ(auc({1, 2, 3}, {1, 1, 0}), 0.0);
  EXPECT_THROW(auc({1, 2}, {1, 1}), Error);
}

// Random embeddings, types and lines against a loop that scores one pair at a time from ψ in
// double precision, for a weak module and for a conditioned one (the pair's type-pair embedding).
TEST(OutfitCompatibility, MatchesANaiveLoop) {
  torch::manual_seed(3);
  const std::int64_t images = 15, k = 6, dim = 4;
  const torch::Tensor psi = torch::randn({images, k, dim});
  const torch::Tensor types = torch::randint(0, 3, {images}, torch::kLong);
  std::vector<std::vector<std::int64_t>> lines;
  std::vector<std::int64_t> labels;
  for (int l = 0; l < 24; ++l) {
    const std::int64_t n = 2 + torch::randint(0, 4, {1}).item<std::int64_t>();
    const torch::Tensor items = torch::randperm(images).slice(0, 0, n);
    lines.emplace_back(items.data_ptr<std::int64_t>(), items.data_ptr<std::int64_t>() + n);
    labels.push_back(l % 3 == 0 ? 0 : 1);
  }
  auto data = wscsl::testing::three_type_outfit_dataset(images, outfits(types, lines, labels));
  const EmbeddingTable t = outfit_table(psi);
  const torch::Tensor pair_condition = three_type_pair_conditions();
  auto e = wscsl::testing::build<Evaluator>("outfit_compatibility");
  for (const bool conditioned : {false, true}) {
    std::vector<double> scores;
    for (const auto& line : lines) {
      double sum = 0;
      int pairs = 0;
      for (std::size_t i = 0; i < line.size(); ++i)
        for (std::size_t j = i + 1; j < line.size(); ++j, ++pairs) {
          const std::int64_t c =
              conditioned ? pair_condition[types[line[i]]][types[line[j]]].item<std::int64_t>() : 0;
          double d2 = 0;
          for (std::int64_t x = 0; x < dim; ++x)
            d2 +=
                std::pow(psi[line[i]][c][x].item<double>() - psi[line[j]][c][x].item<double>(), 2);
          sum += std::sqrt(d2);
        }
      scores.push_back(1 - sum / pairs);
    }
    // The module computes in float32: a distance of ~3 over 4 dimensions is off by ~1e-6 at
    // most, so ranks agree wherever the reference scores are 1e-4 apart; this draw has no closer
    // pair other than exact ties (lines of the same two items, scored alike by both), and the AUC
    // is then exact.
    double wins = 0, positives = 0, negatives = 0;
    for (std::size_t a = 0; a < scores.size(); ++a) {
      (labels[a] ? positives : negatives) += 1;
      for (std::size_t b = 0; b < scores.size(); ++b) {
        if (a != b && scores[a] != scores[b]) {
          ASSERT_GT(std::abs(scores[a] - scores[b]), 1e-4);
        }
        if (labels[a] == 1 && labels[b] == 0)
          wins += scores[a] > scores[b] ? 1.0 : scores[a] == scores[b] ? 0.5 : 0.0;
      }
    }
    std::unique_ptr<ConditionModule> module;
    if (conditioned)
      module = std::make_unique<ConditionPicker>(k, dim);
    else
      module = std::make_unique<wscsl::testing::TableModule>(k, dim,
                                                             std::vector<double>{1, 0, 0, 0, 0, 0});
    const EvalReport r = wscsl::testing::run_evaluator(*e, *module, data, t, t, false);
    EXPECT_DOUBLE_EQ(metric(r, "auc"), wins / (positives * negatives)) << conditioned;
  }
}

TEST(OutfitCompatibility, RefusesWhatItCannotScoreInOneSentence) {
  const EmbeddingTable t = outfit_table(torch::randn({4, 6, 2}));
  auto e = wscsl::testing::build<Evaluator>("outfit_compatibility");
  // A module that cannot score pairs is refused by `wscsl check`, before anything trains.
  EXPECT_TRUE(e->contract().needs_resource(Resource::PairScores));
  // So is a split without lines of both labels (test_outfit_releases.cpp runs `check` on them).
  EXPECT_TRUE(e->contract().needs_resource(Resource::CompatibilityLines));
  ConditionPicker conditioned(6, 2);
  wscsl::testing::TableModule weak(6, 2, {1, 0, 0, 0, 0, 0});
  const auto message = [&](ConditionModule& m, std::optional<OutfitData> o) {
    auto data = wscsl::testing::three_type_outfit_dataset(4, std::move(o));
    try {
      wscsl::testing::run_evaluator(*e, m, data, t, t, false);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  const torch::Tensor typed = torch::tensor({0, 1, 2, 0}, torch::kLong);
  const torch::Tensor untyped = torch::tensor({0, -1, 2, 0}, torch::kLong);
  EXPECT_EQ(message(conditioned, outfits(untyped, {{0, 2}, {1, 3}}, {1, 0})),
            "outfit_compatibility: split 'test': item 1 has no type, and the conditioned "
            "condition module scores a pair of items under the condition of their type pair");
  // A weak module never looks at types.
  EXPECT_EQ(message(weak, outfits(untyped, {{0, 2}, {1, 3}}, {1, 0})), "(no error)");
  EXPECT_EQ(message(weak, outfits(typed, {{0, 2}, {3}}, {1, 0})),
            "outfit_compatibility: split 'test': compatibility line 2 has 1 item: an outfit's "
            "score is the mean over its item pairs");
  EXPECT_EQ(message(weak, outfits(typed, {{0, 2}, {1, 3}}, {1, 1})),
            "outfit_compatibility: split 'test' has 2 compatible and 0 incompatible lines: the "
            "AUC needs both");
  EXPECT_EQ(message(weak, std::nullopt), "outfit_compatibility: split 'test' has no outfits");
}
