// The exact candidate stage of `wscsl search` (searcher.hpp): the rows nearest to a query in the
// Euclidean distance of one ψ_k, or of every ψ_k together, found by LibTorch matrix-vector products
// over the blocks of an index's memory-mapped chunks, so that memory holds one block's distances
// and the best rows found so far.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "index_arrays.hpp"

namespace wscsl::host::search {

// For each of `embeddings` (a ψ_k's index, or -1: every ψ_k together), the `pool` rows of
// `chunks` (whose first rows are `offsets`) nearest to `query_psi` [K, E], nearest first, row
// `exclude` left out (-1: none); blocks of `block_rows` rows computed on `device`.
std::vector<torch::Tensor> exact_candidates(const std::vector<ChunkArrays>& chunks,
                                            const std::vector<std::int64_t>& offsets,
                                            const torch::Tensor& query_psi,
                                            const std::vector<std::int64_t>& embeddings,
                                            std::int64_t pool, std::int64_t block_rows,
                                            std::int64_t exclude, torch::Device device);

}  // namespace wscsl::host::search
