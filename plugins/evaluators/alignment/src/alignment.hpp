// DiscoverNet's alignment criterion: the accuracy of every embedding on the triplets of every
// ground-truth condition, then the condition → embedding assignment by greedy choice (GR),
// entropic optimal transport (OT, POT's Sinkhorn at reg 1e-3 as in the reference evaluation) and
// the exact one-to-one assignment, fitted on one split and applied to another.
#pragma once

#include "wscsl/eval/alignment.hpp"
#include "wscsl/eval/triplet_math.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::alignment_eval {

// The split the greedy choice is made on.
enum class GreedyFit { Target, Fit };

struct AlignmentOptions {
  double reg = 1e-3;
  std::int64_t max_iterations = 1000;
  double tolerance = 1e-9;
  GreedyFit greedy_fit = GreedyFit::Target;
  TieRule ties = TieRule::Half;
};

class Alignment final : public Evaluator {
 public:
  using Options = AlignmentOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit Alignment(const Options& options) : options_(options) {}

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  const alignment::Matrix& greedy_fit_cost(const alignment::Matrix& cost_fit,
                                           const alignment::Matrix& cost_target) const;
  Options options_;
};

}  // namespace wscsl::alignment_eval
