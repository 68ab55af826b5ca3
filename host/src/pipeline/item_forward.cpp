#include "item_forward.hpp"

#include <torch/utils.h>

namespace wscsl::host {

Embedders pipeline_embedders(const Pipeline& pipeline) {
  return {[&pipeline](const torch::Tensor& images, bool with_map) {
            return with_map ? pipeline.backbone->embed_with_map(images)
                            : BackboneOutput{pipeline.backbone->embed(images), {}};
          },
          [&pipeline](const EmbedInput& input) { return pipeline.condition_module->embed(input); }};
}

EmbedInput embed_input(const Pipeline& pipeline, const torch::Tensor& images,
                       const Embedders& embedders) {
  const Contract& needs = pipeline.condition_module->contract();
  BackboneOutput out = embedders.phi(images, needs.needs_resource(Resource::FeatureMap));
  return {std::move(out.phi), std::move(out.feature_map),
          needs.needs_resource(Resource::ItemImages) ? images : torch::Tensor()};
}

ItemFeatures forward_items(const Pipeline& pipeline, const std::vector<ItemInputs>& groups,
                           const Embedders& embedders) {
  return ItemFeatures::concatenated(forward_groups(pipeline, groups, embedders));
}

std::vector<ItemFeatures> forward_groups(const Pipeline& pipeline,
                                         const std::vector<ItemInputs>& groups,
                                         const Embedders& embedders) {
  std::vector<EmbedInput> inputs;
  for (const ItemInputs& group : groups)
    inputs.push_back(embed_input(pipeline, group.images, embedders));
  std::vector<ItemFeatures> parts(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    parts[g].phi = inputs[g].phi;
    parts[g].psi = embedders.psi(inputs[g]);
    inputs[g] = {};  // the feature map is not kept
  }
  for (const NamedTextEncoder& t : pipeline.text_encoders)
    for (std::size_t g = 0; g < groups.size(); ++g)
      parts[g].texts[t.name] = t.encoder->encode(groups[g].texts.at(t.field));
  return parts;
}

FieldTexts field_texts(const Pipeline& pipeline, const SplitData& split, const torch::Tensor& ids) {
  FieldTexts texts;
  for (const NamedTextEncoder& t : pipeline.text_encoders)
    if (!texts.count(t.field)) texts[t.field] = item_texts(split.texts.at(t.field), ids);
  return texts;
}

TripletTexts triplet_texts(const Pipeline& pipeline, const SplitData& split,
                           const torch::Tensor& ids) {
  return {field_texts(pipeline, split, ids.select(1, 0)),
          field_texts(pipeline, split, ids.select(1, 1)),
          field_texts(pipeline, split, ids.select(1, 2))};
}

ForwardTriplets forward_triplets(const Pipeline& pipeline, const TripletImages& images,
                                 const TripletTexts& texts, const torch::Tensor& conditions,
                                 const Embedders& embedders) {
  std::vector<ItemFeatures> roles = forward_groups(
      pipeline,
      {{images.anchor, texts.anchor}, {images.close, texts.close}, {images.far, texts.far}},
      embedders);
  ForwardTriplets out{ItemBlocks(std::move(roles)),
                      Comparisons::triplets_by_role(images.anchor.size(0), images.anchor.device())};
  out.comparisons.conditions = conditions;
  return out;
}

ScoredTriplets score_triplets(const Pipeline& pipeline, const ForwardTriplets& triplets) {
  ScoredTriplets scored{pipeline.condition_module->score(triplets.items, triplets.comparisons),
                        std::nullopt};
  if (pipeline.losses_need(Resource::ReversedScores)) {
    torch::NoGradGuard no_grad;
    scored.reversed =
        pipeline.condition_module->score(triplets.items, triplets.comparisons.reversed());
  }
  return scored;
}

PipelineLoss weighted_loss(const Pipeline& pipeline, const ForwardTriplets& triplets,
                           const ScoredTriplets& scored, const TripletImages& images) {
  torch::Tensor item_images;
  if (pipeline.losses_need(Resource::TrainingImages))
    item_images = torch::cat({images.anchor, images.close, images.far});
  PipelineLoss loss;
  for (const WeightedLoss& l : pipeline.losses) {
    const Contract& needs = l.loss->contract();
    const LossInput loss_input{
        triplets.items, triplets.comparisons, scored.scores,
        needs.needs_resource(Resource::ReversedScores) ? &*scored.reversed : nullptr,
        needs.needs_resource(Resource::TrainingImages) ? &item_images : nullptr};
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
