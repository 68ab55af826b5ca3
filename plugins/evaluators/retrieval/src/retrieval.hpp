// Content-based retrieval per condition (Pérez Rey et al., Appendix B): a seeded query set and a
// database drawn from disjoint images of the evaluated split, ranked by the distance under the
// embedding aligned to each condition; MAP, NDCG, NN precision, precision@k and Recall@k.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::retrieval {

struct RetrievalOptions {
  std::int64_t queries = 1000;
  std::int64_t seed = 0;
  std::vector<std::int64_t> k = {10, 100};
  aligned::Strategy alignment = aligned::Strategy::Ot;
  bool validate = false;
  std::int64_t block_elements = std::int64_t{1} << 24;
};

// Per-query metrics of rankings: `relevant` [Q, N] is 1 where the n-th ranked database item is
// relevant to query q, 0 otherwise (float64). Rows without a relevant item give NaN in map, ndcg
// and recall (they have no defined value) and 0 in precision and nn.
struct RankingMetrics {
  torch::Tensor map;        // [Q] average precision Σ_n δ_n P(n) / R
  torch::Tensor ndcg;       // [Q] Σ_n δ_n / log2(n+1) over Σ_{n≤R} 1/log2(n+1)
  torch::Tensor nn;         // [Q] δ_1
  torch::Tensor precision;  // [Q, |k|] hits in the top k / k
  torch::Tensor recall;     // [Q, |k|] hits in the top k / R
};
RankingMetrics ranking_metrics(const torch::Tensor& relevant, const std::vector<std::int64_t>& k);

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
