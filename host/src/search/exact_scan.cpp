#include "exact_scan.hpp"

#include <torch/utils.h>

#include <algorithm>
#include <limits>

namespace wscsl::host::search {
namespace {

// The `n` smallest of `values` [N] as (values, positions), nearest first; ties keep the lower
// position.
std::pair<torch::Tensor, torch::Tensor> smallest(const torch::Tensor& values, std::int64_t n) {
  auto [v, i] = values.topk(std::min(n, values.size(0)), /*dim=*/0, /*largest=*/false,
                            /*sorted=*/true);
  return {v, i};
}

}  // namespace

std::vector<torch::Tensor> exact_candidates(const std::vector<ChunkArrays>& chunks,
                                            const std::vector<std::int64_t>& offsets,
                                            const torch::Tensor& query_psi,
                                            const std::vector<std::int64_t>& embeddings,
                                            std::int64_t pool, std::int64_t block_rows,
                                            std::int64_t exclude, torch::Device device) {
  torch::NoGradGuard no_grad;
  const torch::Tensor q = query_psi.to(device).to(torch::kFloat);  // [K, E]
  const torch::Tensor q_sqnorm = q.pow(2).sum(-1);                 // [K]
  const std::int64_t k_count = q.size(0);
  bool every_embedding = false;
  std::vector<bool> needed(static_cast<std::size_t>(k_count), false);
  for (const std::int64_t e : embeddings) {
    if (e < 0)
      every_embedding = true;
    else
      needed[static_cast<std::size_t>(e)] = true;
  }
  if (every_embedding) needed.assign(needed.size(), true);
  // Per condition: the best `pool` (squared distance, row) of every block, chosen from at the end.
  std::vector<std::vector<torch::Tensor>> block_d(embeddings.size()),
      block_found(embeddings.size());
  for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk) {
    const torch::Tensor& psi = chunks[chunk].psi->tensor();            // [K, n, E]
    const torch::Tensor& sqnorm = chunks[chunk].psi_sqnorm->tensor();  // [K, n]
    const std::int64_t n = psi.size(1);
    for (std::int64_t b0 = 0; b0 < n; b0 += block_rows) {
      const std::int64_t b1 = std::min(n, b0 + block_rows);
      const torch::Tensor block = psi.slice(1, b0, b1).to(device);
      const torch::Tensor norms = sqnorm.slice(1, b0, b1).to(device);
      // ‖x − q‖² = ‖x‖² − 2 x·q + ‖q‖², one matrix-vector product per embedding.
      std::vector<torch::Tensor> d2(static_cast<std::size_t>(k_count));
      for (std::int64_t k = 0; k < k_count; ++k)
        if (needed[static_cast<std::size_t>(k)])
          d2[static_cast<std::size_t>(k)] =
              (norms[k] - 2 * block[k].mv(q[k]) + q_sqnorm[k]).clamp_min(0);
      const std::int64_t first_row = offsets[chunk] + b0;
      for (std::size_t c = 0; c < embeddings.size(); ++c) {
        torch::Tensor d;
        if (embeddings[c] >= 0) {
          d = d2[static_cast<std::size_t>(embeddings[c])];
        } else {
          d = d2[0].clone();
          for (std::int64_t k = 1; k < k_count; ++k)
            d += d2[static_cast<std::size_t>(k)];
        }
        if (exclude >= first_row && exclude < first_row + (b1 - b0)) {
          d = d.clone();
          d[exclude - first_row] = std::numeric_limits<float>::infinity();
        }
        auto [v, i] = smallest(d, pool);
        block_d[c].push_back(v.to(torch::kCPU));
        block_found[c].push_back(i.to(torch::kCPU) + first_row);
      }
    }
  }
  std::vector<torch::Tensor> best_rows(embeddings.size());
  for (std::size_t c = 0; c < embeddings.size(); ++c) {
    best_rows[c] =
        torch::cat(block_found[c]).index_select(0, smallest(torch::cat(block_d[c]), pool).second);
  }
  // The excluded row never makes the pool.
  for (std::size_t c = 0; c < embeddings.size(); ++c)
    best_rows[c] = best_rows[c].index_select(0, (best_rows[c] != exclude).nonzero().reshape({-1}));
  return best_rows;
}

}  // namespace wscsl::host::search
