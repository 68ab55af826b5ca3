// The pieces of outfit scoring (wscsl/eval/outfit_scoring.hpp) that the outfit evaluators' tests
// reach only through their results: which pairs are scored, in which order, and how a row's
// smallest score is chosen.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "wscsl/eval/outfit_scoring.hpp"

using namespace wscsl;

namespace {

std::vector<std::int64_t> values(const torch::Tensor& t) {
  return {t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel()};
}

IdLists lists(std::vector<std::int64_t> offsets, std::vector<std::int64_t> items) {
  return {torch::tensor(offsets, torch::kLong), torch::tensor(items, torch::kLong)};
}

}  // namespace

TEST(OutfitScoring, PairsWithinEveryListInListOrder) {
  // Lists {7, 8, 9}, {} and {4, 5}: (7,8), (7,9), (8,9), then (4,5).
  const outfit::ItemPairs p = outfit::pairs_within(lists({0, 3, 3, 5}, {7, 8, 9, 4, 5}));
  EXPECT_EQ(values(p.first), (std::vector<std::int64_t>{7, 7, 8, 4}));
  EXPECT_EQ(values(p.second), (std::vector<std::int64_t>{8, 9, 9, 5}));
  EXPECT_EQ(values(p.owner), (std::vector<std::int64_t>{0, 0, 0, 2}));
  EXPECT_EQ(outfit::pairs_within(IdLists{}).first.numel(), 0);
}

TEST(OutfitScoring, QuestionItemsAgainstEveryCandidate) {
  BlankQuestions b;
  b.questions = lists({0, 2, 3}, {1, 2, 3});
  b.candidates = torch::tensor({10, 11, 12, 13}, torch::kLong).reshape({2, 2});
  const outfit::ItemPairs p = outfit::question_candidate_pairs(b);
  // Question 1 (items 1, 2) with candidates 10 and 11, question 2 (item 3) with 12 and 13.
  EXPECT_EQ(values(p.first), (std::vector<std::int64_t>{1, 2, 1, 2, 3, 3}));
  EXPECT_EQ(values(p.second), (std::vector<std::int64_t>{10, 10, 11, 11, 12, 13}));
  EXPECT_EQ(values(p.owner), (std::vector<std::int64_t>{0, 0, 1, 1, 2, 3}));
}

// numpy's argmin: the first of equal minima, and a NaN before anything.
TEST(OutfitScoring, FirstArgminIsNumpys) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const torch::Tensor s =
      torch::tensor({3.0, 1.0, 1.0, 2.0, 0.5, 0.7, 0.5, 0.1, 2.0, nan, 1.0, nan}, torch::kDouble)
          .reshape({3, 4});
  EXPECT_EQ(values(outfit::first_argmin(s)), (std::vector<std::int64_t>{1, 3, 1}));
}
