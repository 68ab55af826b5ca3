// The reversed-triplet experiment of DiscoverNet (Fig. 1): how often the module's own prediction
// calls original triplets valid and how often it calls their reversed versions valid, and a sweep
// over the fraction of reversed triplets mixed into the evaluation set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/eval/triplet_math.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::reversed_triplets {

struct ReversedTripletsOptions {
  PredictionMode mode = PredictionMode::Auto;
  std::vector<double> fractions = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  std::int64_t seed = 0;
  TieRule ties = TieRule::Half;
};

// One point of the sweep: the first round(fraction · T) triplets of a seeded permutation are
// reversed, the others kept.
struct SweepPoint {
  double fraction = 0;
  std::int64_t reversed = 0;  // how many triplets are reversed
  double valid = 0;           // proportion of the mixed set predicted valid
  double accuracy = 0;        // proportion predicted as they are: originals valid, reversed not
};

// valid_original[t], valid_reversed[t] ∈ {0, ½, 1}: the module's prediction that triplet t, and
// its reversed version, is valid. `order` is the permutation choosing which triplets to reverse.
SweepPoint sweep_point(const std::vector<double>& valid_original,
                       const std::vector<double>& valid_reversed,
                       const std::vector<std::int64_t>& order, double fraction);

class ReversedTriplets final : public Evaluator {
 public:
  using Options = ReversedTripletsOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit ReversedTriplets(const Options& options) : options_(options) {}

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::reversed_triplets
