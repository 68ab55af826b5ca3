#include "logistic.hpp"

#include <torch/nn/functional/activation.h>

namespace wscsl::logistic {

Schema<LogisticOptions> LogisticLoss::schema() {
  using O = LogisticOptions;
  Schema<O> s(
      "Logistic triplet loss, mean over the batch: softplus(γ − (d_far − d_close)) = "
      "log(1 + exp(−(Diff − γ))), DiscoverNet's probabilistic view (supplementary Eq. 5).");
  s.field("margin", &O::margin, "The threshold γ subtracted from Diff.").min(0.0);
  s.field(
      "expectation", &O::expectation,
      "\"distance\": ℓ(Σ_k w_k Diff_k − γ) on the fused distances (the approximation Eq. 6 "
      "trains with); \"loss\": Σ_k w_k ℓ(Diff_k − γ), the expected loss before that "
      "approximation, from the per-embedding distances and condition weights.",
      EnumChoices<Expectation>{{Expectation::Distance, "distance", "ℓ(Σ_k w_k Diff_k − γ), Eq. 6"},
                               {Expectation::Loss, "loss", "Σ_k w_k ℓ(Diff_k − γ), Eq. 5"}});
  return s;
}

std::map<std::string, torch::Tensor> LogisticLoss::compute_impl(const LossInput& input) {
  const ComparisonScores& s = input.scores;
  switch (options_.expectation) {
    case Expectation::Loss: {
      const torch::Tensor per_embedding =
          torch::softplus(options_.margin - (s.third_distances - s.second_distances));
      return {{"logistic", (s.weights * per_embedding).sum(1).mean()}};
    }
    case Expectation::Distance:
      return {
          {"logistic", torch::softplus(options_.margin - (s.fused_third - s.fused_second)).mean()}};
  }
  throw Error("logistic: unknown expectation");
}

}  // namespace wscsl::logistic

WSCSL_PLUGIN(logistic, "0.1.0", "Logistic triplet loss (DiscoverNet's probabilistic view)") {
  registrar.add<wscsl::Loss, wscsl::logistic::LogisticLoss>("logistic");
}
