#include "lsn_min.hpp"

namespace wscsl::lsn_min {

Schema<LsnMinOptions> LsnMinLoss::schema() {
  using O = LsnMinOptions;
  Schema<O> s(
      "LSN's minimum over embeddings of the margin loss ℓ_ik = max(0, γ − (d_k(a_i,f_i) − "
      "d_k(a_i,c_i))) on the per-embedding distances.");
  s.field("margin", &O::margin, "Required gap γ between far and close distances.").min(0.0);
  s.field("form", &O::form,
          "\"batch\": min_k mean_i ℓ_ik, the whole batch trains one embedding (DiscoverNet's "
          "reimplementation); \"triplet\": mean_i min_k ℓ_ik, each triplet trains its best "
          "embedding.",
          EnumChoices<Form>{{Form::Batch, "batch", "min_k mean_i ℓ_ik"},
                            {Form::Triplet, "triplet", "mean_i min_k ℓ_ik"}});
  return s;
}

std::map<std::string, torch::Tensor> LsnMinLoss::compute_impl(const LossInput& input) {
  const ComparisonScores& s = input.scores;
  const torch::Tensor hinge =
      torch::relu(options_.margin - (s.third_distances - s.second_distances));
  switch (options_.form) {
    case Form::Triplet:
      return {{"lsn_min", std::get<0>(hinge.min(1)).mean()}};
    case Form::Batch:
      return {{"lsn_min", hinge.mean(0).min()}};
  }
  throw Error("lsn_min: unknown form");
}

}  // namespace wscsl::lsn_min

WSCSL_PLUGIN(lsn_min, "0.1.0", "LSN's minimum-over-embeddings margin loss") {
  registrar.add<wscsl::Loss, wscsl::lsn_min::LsnMinLoss>("lsn_min");
}
