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

TripletTexts triplet_texts(const Pipeline& pipeline, const SplitData& split,
                           const torch::Tensor& ids) {
  TripletTexts texts;
  for (const NamedTextEncoder& t : pipeline.text_encoders) {
    if (texts.count(t.field)) continue;
    const std::vector<std::string>& all = split.texts.at(t.field);
    texts[t.field] = {item_texts(all, ids.select(1, 0)), item_texts(all, ids.select(1, 1)),
                      item_texts(all, ids.select(1, 2))};
  }
  return texts;
}

void encode_texts(const Pipeline& pipeline, const TripletTexts& texts, TripletInput& input) {
  for (const NamedTextEncoder& t : pipeline.text_encoders) {
    const RoleTexts& roles = texts.at(t.field);
    input.texts[t.name] = {t.encoder->encode(roles.anchor), t.encoder->encode(roles.close),
                           t.encoder->encode(roles.far)};
  }
}

ScoredTriplets score_triplets(const Pipeline& pipeline, const TripletInput& input) {
  ScoredTriplets scored{pipeline.condition_module->score(input), std::nullopt};
  if (pipeline.losses_need(Resource::ReversedScores)) {
    torch::NoGradGuard no_grad;
    scored.reversed = pipeline.condition_module->score(input.reversed());
  }
  return scored;
}

PipelineLoss weighted_loss(const Pipeline& pipeline, const TripletInput& input,
                           const ScoredTriplets& scored, const TripletImages& roles) {
  PipelineLoss loss;
  for (const WeightedLoss& l : pipeline.losses) {
    const Contract& needs = l.loss->contract();
    const LossInput loss_input{
        input, scored.scores,
        needs.needs_resource(Resource::ReversedScores) ? &*scored.reversed : nullptr,
        needs.needs_resource(Resource::TrainingImages) ? &roles : nullptr};
    for (const auto& [name, value] : l.loss->compute(loss_input)) {
      const torch::Tensor term = value.reshape({});
      const torch::Tensor weighted = term * l.weight;
      loss.total = loss.total.defined() ? loss.total + weighted : weighted;
      loss.terms.emplace_back(l.name + "/" + name, term);
    }
  }
  return loss;
}

}  // namespace wscsl::host
