// Triplet accuracy: the fraction of triplets whose close item the model places nearer the anchor
// than the far item, using the module's own (fused) prediction. For weakly supervised modules
// this is the old condition-free WS-CSL criterion; a tie counts half, or (ties = "strict")
// as wrong.
#pragma once

#include "wscsl/eval/triplet_math.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::triplet_accuracy {

struct TripletAccuracyOptions {
  PredictionMode mode = PredictionMode::Auto;
  TieRule ties = TieRule::Half;
};

class TripletAccuracy final : public Evaluator {
 public:
  using Options = TripletAccuracyOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit TripletAccuracy(const Options& options) : options_(options) {}

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::triplet_accuracy
