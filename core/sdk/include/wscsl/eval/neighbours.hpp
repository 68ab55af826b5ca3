// Distances between the images of two embedding tables (queries × database) under the module's
// own metric, and rankings, for retrieval-style evaluators.
#pragma once

#include <cstdint>

#include "wscsl/plugin/condition_module.hpp"

namespace wscsl {

// d_k(query i, database j) for every embedding k: ψ of the queries [Q, K, E] and of the database
// [N, K, E] → float [Q, N, K], computed with ConditionModule::distances (the metric the module
// trains with) in tiles of at most `tile_pairs` (query, database) pairs, so the temporaries stay
// near tile_pairs · K · E floats whatever the database size. The module computes on its own
// device; the result is on the queries' (the CPU for embedding tables).
torch::Tensor cross_distances(ConditionModule& module, const torch::Tensor& psi_queries,
                              const torch::Tensor& psi_database, std::int64_t tile_pairs = 16384);

// A table's rows split for retrieval: the first `queries` of a permutation seeded by `seed` are
// the queries (in that order), every other row the database (ascending). The same seed gives
// the same queries, in the same order, whatever `queries` is.
struct QuerySplit {
  torch::Tensor queries;   // [Q] int64 rows
  torch::Tensor database;  // [N − Q] int64 rows
};
QuerySplit split_queries(std::int64_t rows, std::int64_t queries, std::uint64_t seed);

// Database indices of each row of `distances` [Q, N] from nearest to farthest; equal distances
// keep the database order (a stable sort), so rankings are deterministic.
torch::Tensor rank_database(const torch::Tensor& distances);

}  // namespace wscsl
