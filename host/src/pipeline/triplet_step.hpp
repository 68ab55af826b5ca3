// What a training step computes from its triplets' images up to the weighted loss: shared by the
// trainer and by the probe of `wscsl check`, so that both run the components alike.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace wscsl::host {

using Embedder = std::function<torch::Tensor(const torch::Tensor&)>;

// The texts of a batch's triplets by role, for one dataset text field.
struct RoleTexts {
  std::vector<std::string> anchor, close, far;
};
// By dataset text field: the fields the pipeline's text encoders read.
using TripletTexts = std::map<std::string, RoleTexts>;

// The texts of the triplets `ids` ([B, 3] image ids, on the CPU) in `split`'s text fields that the
// pipeline's text encoders read.
TripletTexts triplet_texts(const Pipeline& pipeline, const SplitData& split,
                           const torch::Tensor& ids);

// Each text encoder's features of the triplets' items, into `input.texts` (one call per role, as
// φ).
void encode_texts(const Pipeline& pipeline, const TripletTexts& texts, TripletInput& input);

// φ of each role by `phi` (one call per role, so that batch-norm statistics are per role as in
// the reference code), then ψ of each by `psi`.
TripletInput embed_triplets(const TripletImages& roles, const Embedder& phi, const Embedder& psi);

// The condition module's scores of the triplets and, when a loss needs them, those of the
// reversed triplets (computed without gradient).
struct ScoredTriplets {
  TripletScores scores;
  std::optional<TripletScores> reversed;
};
ScoredTriplets score_triplets(const Pipeline& pipeline, const TripletInput& input);

// The pipeline's loss of a batch: Σ over the losses of weight · Σ of its terms, and each term
// (unweighted, 0-d) named "<loss name>/<term>". Each loss gets what its contract needs and nothing
// more.
struct PipelineLoss {
  torch::Tensor total;
  std::vector<std::pair<std::string, torch::Tensor>> terms;
};
PipelineLoss weighted_loss(const Pipeline& pipeline, const TripletInput& input,
                           const ScoredTriplets& scored, const TripletImages& roles);

}  // namespace wscsl::host
