// The pipeline's one forward pass — items → backbone → text encoders → ψ — and what a training
// step computes from it up to the weighted loss. The training step, evaluation and the probe of
// `wscsl check` all run the components through it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace wscsl::host {

// By dataset text field (the fields the pipeline's text encoders read): one text per item.
using FieldTexts = std::map<std::string, std::vector<std::string>>;

// A group of items the components see in one call: their images [n, C, H, W] and texts.
struct ItemInputs {
  torch::Tensor images;
  FieldTexts texts;
};

// φ of images (with the backbone's feature map when asked), and ψ of what the condition module
// embeds: the pipeline's backbone and condition module, or stand-ins (the probe's random values
// for a component it skips).
struct Embedders {
  std::function<BackboneOutput(const torch::Tensor& images, bool with_map)> phi;
  std::function<torch::Tensor(const EmbedInput&)> psi;
};
Embedders pipeline_embedders(const Pipeline& pipeline);

// What the condition module embeds `images` from: φ, and the feature map and the images where its
// contract needs them. Neither is kept beyond the call that reads it (tables hold φ and ψ).
EmbedInput embed_input(const Pipeline& pipeline, const torch::Tensor& images,
                       const Embedders& embedders);

// The features of the items of `groups`, one group after another. Each component is called once
// per group: φ of every group, then ψ of every group, then each text encoder on every group. A
// training step's groups are its roles, so that batch-norm statistics are per role as in the
// reference code; evaluation's are chunks of a split.
ItemFeatures forward_items(const Pipeline& pipeline, const std::vector<ItemInputs>& groups,
                           const Embedders& embedders);
// The same, group by group.
std::vector<ItemFeatures> forward_groups(const Pipeline& pipeline,
                                         const std::vector<ItemInputs>& groups,
                                         const Embedders& embedders);

// The texts of items `ids` (1-D image ids, on the CPU) in the fields the pipeline's text
// encoders read.
FieldTexts field_texts(const Pipeline& pipeline, const SplitData& split, const torch::Tensor& ids);

// The images [B, C, H, W] of a batch's triplets by role.
struct TripletImages {
  torch::Tensor anchor, close, far;
};
// The texts of a batch's triplets by role.
struct TripletTexts {
  FieldTexts anchor, close, far;
};
// The texts of the triplets `ids` ([B, 3] image ids, on the CPU).
TripletTexts triplet_texts(const Pipeline& pipeline, const SplitData& split,
                           const torch::Tensor& ids);

// A batch of triplets through the forward pass: its items laid out by role
// (Comparisons::triplets_by_role) and the triplets among them. Each role is a block of the items
// (ItemBlocks), so that the condition module and the losses read the role's own tensors, as the
// reference code's per-role ones.
struct ForwardTriplets {
  ItemBlocks items;
  Comparisons comparisons;
};
ForwardTriplets forward_triplets(const Pipeline& pipeline, const TripletImages& images,
                                 const TripletTexts& texts, const torch::Tensor& conditions,
                                 const Embedders& embedders);

// The condition module's scores of the triplets and, when a loss needs them, those of the
// reversed triplets (computed without gradient).
struct ScoredTriplets {
  ComparisonScores scores;
  std::optional<ComparisonScores> reversed;
};
ScoredTriplets score_triplets(const Pipeline& pipeline, const ForwardTriplets& triplets);

// The pipeline's loss of a batch: Σ over the losses of weight · Σ of its terms, and each term
// (unweighted, 0-d) named "<loss name>/<term>". Each loss gets what its contract needs and nothing
// more.
struct PipelineLoss {
  torch::Tensor total;
  std::vector<std::pair<std::string, torch::Tensor>> terms;
};
PipelineLoss weighted_loss(const Pipeline& pipeline, const ForwardTriplets& triplets,
                           const ScoredTriplets& scored, const TripletImages& images);

}  // namespace wscsl::host
