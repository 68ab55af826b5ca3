// Content-based retrieval per condition (Pérez Rey et al., Appendix B): a seeded query set and a
// database drawn from disjoint images of the evaluated split, ranked by the distance under the
// embedding aligned to each condition; MAP, NDCG, NN precision, precision@k and Recall@k, and
// pytorch-metric-learning's MAP@R, R-precision and MRR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::retrieval {

// `queries`: a seeded sample of this many images, or every image (each against all the others).
struct QueryCount {
  bool all = false;
  std::int64_t count = 1000;  // when not `all`
};

struct RetrievalOptions {
  QueryCount queries;
  std::int64_t seed = 0;
  std::vector<std::int64_t> k = {10, 100};
  aligned::Strategy alignment = aligned::Strategy::Ot;
  bool validate = false;
  std::int64_t block_elements = std::int64_t{1} << 24;
};

// Per-query metrics of rankings: `relevant` [Q, N] is 1 where the n-th ranked database item is
// relevant to query q, 0 otherwise (float64). Rows without a relevant item give NaN in map, ndcg,
// recall, map_at_r, r_precision and mrr (they have no defined value) and 0 in precision and nn.
struct RankingMetrics {
  torch::Tensor map;          // [Q] average precision Σ_n δ_n P(n) / R
  torch::Tensor ndcg;         // [Q] Σ_n δ_n / log2(n+1) over Σ_{n≤R} 1/log2(n+1)
  torch::Tensor nn;           // [Q] δ_1
  torch::Tensor precision;    // [Q, |k|] hits in the top k / k
  torch::Tensor recall;       // [Q, |k|] hits in the top k / R
  torch::Tensor map_at_r;     // [Q] Σ_{n≤R} δ_n P(n) / R
  torch::Tensor r_precision;  // [Q] hits in the top R / R
  torch::Tensor mrr;          // [Q] 1 / rank of the first relevant item
};
RankingMetrics ranking_metrics(const torch::Tensor& relevant, const std::vector<std::int64_t>& k);

// Images the evaluated split must have: the queries (one with "all") and a database of max(k).
std::int64_t needed_images(const RetrievalOptions& options);

class Retrieval final : public Evaluator {
 public:
  using Options = RetrievalOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Retrieval(const Options& options) : options_(options) {}
  bool runs_during_validation() const override { return options_.validate; }

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::retrieval
