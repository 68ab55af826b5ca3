// Triplet accuracy: the fraction of triplets whose close item the model places nearer the anchor
// than the far item, using the module's own (fused) prediction. For weakly supervised modules
// this is the old condition-free WS-CSL criterion; ties count half.
#pragma once

#include <string>

#include "wscsl/sdk.hpp"

namespace wscsl::triplet_accuracy {

struct TripletAccuracyOptions {
  std::string mode = "auto";  // "auto", "condition_free", "condition_given"
};

class TripletAccuracy final : public Evaluator {
 public:
  using Options = TripletAccuracyOptions;
  static Schema<Options> schema();
  explicit TripletAccuracy(const Options& options) : options_(options) {}

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::triplet_accuracy
