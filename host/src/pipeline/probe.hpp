// The probe of `wscsl check`: every component of a built pipeline runs once on a few triplets of
// random images of the dataset's declared shape, so that a plugin that breaks its tensor contract
// is refused before anything trains, with the sentence training would give.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace wscsl::host {

// Triplets in the probe's batch.
inline constexpr std::int64_t kProbeTriplets = 4;

struct ProbeReport {
  std::vector<std::string> ran;  // "φ float [4, 64]", "loss 'margin'", ...
  double milliseconds = 0.0;
};

// Runs what a training step runs, in training mode — the backbone on each role's images, the
// condition module's embed and score (with its distances, weights and aux terms, and the reversed
// triplets' scores where a loss needs them), and every loss with what its contract needs — then,
// in evaluation mode and without gradient, what the evaluators read: φ, ψ and the scores. The
// interfaces' checks throw ComponentError on a wrong shape or dtype.
//
// A kind in `skip` (Kind::Backbone, Kind::ConditionModule) does not run: the later components get
// random tensors of the shapes it declares instead. The model's buffers, its training mode and
// LibTorch's global random state are as they were before.
ProbeReport probe_pipeline(const Pipeline& pipeline, const std::set<Kind>& skip);

}  // namespace wscsl::host
