#include "margin.hpp"

namespace wscsl::margin {

Schema<MarginOptions> MarginLoss::schema() {
  Schema<MarginOptions> s(
      "Hinge loss on the fused distances, mean over the batch: max(0, margin − (d_far − "
      "d_close)) — PyTorch's MarginRankingLoss(d_far, d_close, +1) as the reference code uses it.");
  s.field("margin", &MarginOptions::margin, "Required gap γ between far and close distances.")
      .min(0.0);
  return s;
}

std::map<std::string, torch::Tensor> MarginLoss::compute_impl(const LossInput& input) {
  const ComparisonScores& s = input.scores;
  return {{"margin", torch::relu(options_.margin - (s.fused_third - s.fused_second)).mean()}};
}

}  // namespace wscsl::margin

WSCSL_PLUGIN(margin, "0.1.0", "Margin (hinge) triplet loss on fused distances") {
  registrar.add<wscsl::Loss, wscsl::margin::MarginLoss>("margin");
}
