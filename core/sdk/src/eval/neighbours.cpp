#include "wscsl/eval/neighbours.hpp"

#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>

#include "wscsl/error.hpp"
#include "wscsl/nn/device.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl {

torch::Tensor cross_distances(ConditionModule& module, const torch::Tensor& psi_queries,
                              const torch::Tensor& psi_database, std::int64_t tile_pairs) {
  if (psi_queries.dim() != 3 || psi_database.dim() != 3 ||
      psi_queries.size(1) != psi_database.size(1) || psi_queries.size(2) != psi_database.size(2))
    throw Error(
        "cross_distances: ψ of the queries and of the database must be [Q, K, E] and "
        "[N, K, E]");
  torch::NoGradGuard no_grad;
  const std::int64_t q = psi_queries.size(0), n = psi_database.size(0);
  const std::int64_t k = psi_queries.size(1), e = psi_queries.size(2);
  torch::Tensor out = torch::empty({q, n, k}, psi_queries.options().dtype(torch::kFloat));
  if (q == 0 || n == 0) return out;
  const torch::Device device = nn::device_of(module);
  const torch::Tensor database = psi_database.to(device);
  // Tiles of `rows` queries × `cols` database items.
  const std::int64_t cols = std::min(n, std::max<std::int64_t>(1, tile_pairs));
  const std::int64_t rows = std::max<std::int64_t>(1, tile_pairs / cols);
  for (std::int64_t r0 = 0; r0 < q; r0 += rows) {
    const std::int64_t r1 = std::min(q, r0 + rows);
    const torch::Tensor a = psi_queries.slice(0, r0, r1).to(device).unsqueeze(1);
    for (std::int64_t c0 = 0; c0 < n; c0 += cols) {
      const std::int64_t c1 = std::min(n, c0 + cols);
      const torch::Tensor b = database.slice(0, c0, c1).unsqueeze(0);
      const std::int64_t pairs = (r1 - r0) * (c1 - c0);
      const torch::Tensor d =
          module.distances(a.expand({r1 - r0, c1 - c0, k, e}).reshape({pairs, k, e}),
                           b.expand({r1 - r0, c1 - c0, k, e}).reshape({pairs, k, e}));
      out.slice(0, r0, r1).slice(1, c0, c1).copy_(d.reshape({r1 - r0, c1 - c0, k}));
    }
  }
  return out;
}

QuerySplit split_queries(std::int64_t rows, std::int64_t queries, std::uint64_t seed) {
  const torch::Tensor order = torch::tensor(seeded_permutation(seed, rows));
  return {order.slice(0, 0, queries), std::get<0>(order.slice(0, queries).sort())};
}

torch::Tensor rank_database(const torch::Tensor& distances) {
  return std::get<1>(distances.sort(/*stable=*/true, /*dim=*/1, /*descending=*/false));
}

}  // namespace wscsl
