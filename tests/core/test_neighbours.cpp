#include <gtest/gtest.h>

#include <set>

#include "wscsl/eval/neighbours.hpp"
#include "wscsl/testing/fixtures.hpp"

using namespace wscsl;

TEST(Neighbours, SplitQueriesGivesDisjointSeededQueriesAndAnAscendingDatabase) {
  const QuerySplit s = split_queries(10, 3, 5);
  ASSERT_EQ(s.queries.size(0), 3);
  ASSERT_EQ(s.database.size(0), 7);
  std::set<std::int64_t> all;
  for (std::int64_t i = 0; i < 3; ++i)
    all.insert(s.queries[i].item<std::int64_t>());
  for (std::int64_t i = 0; i < 7; ++i) {
    all.insert(s.database[i].item<std::int64_t>());
    if (i > 0) {
      EXPECT_LT(s.database[i - 1].item<std::int64_t>(), s.database[i].item<std::int64_t>());
    }
  }
  EXPECT_EQ(all.size(), 10u);  // disjoint, and together every row
  const QuerySplit more = split_queries(10, 5, 5);
  EXPECT_TRUE(torch::equal(more.queries.slice(0, 0, 3), s.queries));  // same seed, same prefix
  EXPECT_FALSE(torch::equal(split_queries(10, 3, 6).queries, s.queries));
}

TEST(Neighbours, CrossDistancesMatchANaiveLoopWhateverTheTileAndRankingIsStable) {
  // ψ [M, 2, 1]: embedding 0 holds the value, embedding 1 its negation times two.
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5});
  const torch::Tensor values = torch::tensor({0.0, 3.0, 1.0, -1.0, 2.0});
  const torch::Tensor psi = torch::stack({values, -2 * values}, 1).unsqueeze(2);
  const torch::Tensor queries = psi.slice(0, 0, 2), database = psi.slice(0, 2, 5);
  const torch::Tensor whole = cross_distances(module, queries, database);
  const torch::Tensor tiled = cross_distances(module, queries, database, /*tile_pairs=*/1);
  ASSERT_EQ(whole.sizes(), (std::vector<std::int64_t>{2, 3, 2}));
  for (std::int64_t q = 0; q < 2; ++q)
    for (std::int64_t n = 0; n < 3; ++n)
      for (std::int64_t k = 0; k < 2; ++k) {
        const torch::Tensor d = module.distances(queries[q].unsqueeze(0), database[n].unsqueeze(0));
        EXPECT_FLOAT_EQ(whole[q][n][k].item<float>(), d[0][k].item<float>());
        EXPECT_FLOAT_EQ(tiled[q][n][k].item<float>(), d[0][k].item<float>());
      }
  // Query 0 (value 0) against 1, −1, 2: the two ties at distance 1 keep the database order.
  const torch::Tensor ranked = rank_database(whole.select(2, 0));
  EXPECT_EQ(ranked[0][0].item<std::int64_t>(), 0);
  EXPECT_EQ(ranked[0][1].item<std::int64_t>(), 1);
  EXPECT_EQ(ranked[0][2].item<std::int64_t>(), 2);
}
