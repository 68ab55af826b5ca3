// What a training step computes from its triplets' images up to the weighted loss: shared by the
// trainer and by the probe of `wscsl check`, so that both run the components alike.
#pragma once

#include <functional>
#include <optional>

#include "pipeline.hpp"

namespace wscsl::host {

using Embedder = std::function<torch::Tensor(const torch::Tensor&)>;

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

// Σ over the losses of weight · Σ of its terms. Each loss gets what its contract needs and
// nothing more.
torch::Tensor weighted_loss(const Pipeline& pipeline, const TripletInput& input,
                            const ScoredTriplets& scored, const TripletImages& roles);

}  // namespace wscsl::host
