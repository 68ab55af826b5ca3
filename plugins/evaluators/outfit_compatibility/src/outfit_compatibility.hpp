// Outfit compatibility (Vasileva et al., ECCV 2018; SCE-Net's Tables 1–4): the ROC AUC over a
// split's compatibility lines of 1 − the mean distance over each outfit's unordered item pairs,
// every pair scored by the module under the condition of its type pair.
#pragma once

#include <string>

#include "wscsl/sdk.hpp"

namespace wscsl::outfit_compatibility {

struct OutfitCompatibilityOptions {
  std::string file = "outfit_compatibility.tsv";
};

class OutfitCompatibility final : public Evaluator {
 public:
  using Options = OutfitCompatibilityOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit OutfitCompatibility(const Options& options) : options_(options) {}

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::outfit_compatibility
