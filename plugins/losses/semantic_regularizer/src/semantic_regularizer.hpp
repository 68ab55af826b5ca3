// DiscoverNet's semantic regularizer (Eq. 10): where a triplet and its reversal are both
// predicted valid, penalise the histogram intersection Σ_k min(p_k(τ), p_k(τ_rev)) of their
// condition weights, so that the two are explained by different embeddings.
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::semantic_regularizer {

enum class Reduction { Sum, Mean };

struct SemanticRegularizerOptions {
  double lambda = 0.1;
  Reduction reduction = Reduction::Sum;
};

class SemanticRegularizer final : public Loss {
 public:
  using Options = SemanticRegularizerOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit SemanticRegularizer(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::semantic_regularizer
