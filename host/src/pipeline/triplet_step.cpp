#include "triplet_step.hpp"

#include <torch/utils.h>

namespace wscsl::host {

TripletInput embed_triplets(const TripletImages& roles, const Embedder& phi, const Embedder& psi) {
  TripletInput in;
  in.phi_anchor = phi(roles.anchor);
  in.phi_close = phi(roles.close);
  in.phi_far = phi(roles.far);
  in.psi_anchor = psi(in.phi_anchor);
  in.psi_close = psi(in.phi_close);
  in.psi_far = psi(in.phi_far);
  return in;
}

ScoredTriplets score_triplets(const Pipeline& pipeline, const TripletInput& input) {
  ScoredTriplets scored{pipeline.condition_module->score(input), std::nullopt};
  if (pipeline.losses_need(Resource::ReversedScores)) {
    torch::NoGradGuard no_grad;
    scored.reversed = pipeline.condition_module->score(input.reversed());
  }
  return scored;
}

torch::Tensor weighted_loss(const Pipeline& pipeline, const TripletInput& input,
                            const ScoredTriplets& scored, const TripletImages& roles) {
  torch::Tensor total;
  for (const WeightedLoss& l : pipeline.losses) {
    const Contract& needs = l.loss->contract();
    const LossInput loss_input{
        input, scored.scores,
        needs.needs_resource(Resource::ReversedScores) ? &*scored.reversed : nullptr,
        needs.needs_resource(Resource::TrainingImages) ? &roles : nullptr};
    for (const auto& [name, value] : l.loss->compute(loss_input)) {
      const torch::Tensor weighted = value.reshape({}) * l.weight;
      total = total.defined() ? total + weighted : weighted;
    }
  }
  return total;
}

}  // namespace wscsl::host
