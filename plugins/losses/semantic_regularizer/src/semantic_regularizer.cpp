#include "semantic_regularizer.hpp"

namespace wscsl::semantic_regularizer {

Schema<SemanticRegularizerOptions> SemanticRegularizer::schema() {
  using O = SemanticRegularizerOptions;
  Schema<O> s(
      "DiscoverNet's semantic regularizer (Eq. 10): λ · Σ_i [d_f > d_c for τ_i and for its "
      "reversal] · Σ_k min(p_ik, p_rev,ik), the reversed pass detached.");
  s.field("lambda", &O::lambda,
          "λ (released default 0.1; the paper's Table 5 finds 0.001 best on Celeb-A and 0.1 "
          "collapsing). The host's `weight` multiplies it too.")
      .min(0.0);
  s.field("reduction", &O::reduction,
          "\"sum\" over the selected triplets (released code: mean × count); \"mean\" over the "
          "batch (the margin loss's reduction).",
          EnumChoices<Reduction>{{Reduction::Sum, "sum", "sum over the selected triplets"},
                                 {Reduction::Mean, "mean", "mean over the batch"}});
  return s;
}

Contract SemanticRegularizer::contract_of(const Options&) {
  Contract c;
  c.needs = {{Resource::ReversedScores}};
  return c;
}

std::map<std::string, torch::Tensor> SemanticRegularizer::compute_impl(const LossInput& input) {
  const ComparisonScores& s = input.scores;
  const ComparisonScores& r = *input.reversed;
  // Whether both directions are satisfied is checked without gradient (the paper's footnote 4).
  const torch::Tensor both = ((s.fused_third > s.fused_second) & (r.fused_third > r.fused_second))
                                 .detach()
                                 .to(s.weights.scalar_type());
  const torch::Tensor hik = torch::minimum(s.weights, r.weights.detach()).sum(1);
  const torch::Tensor selected = hik * both;
  switch (options_.reduction) {
    case Reduction::Sum:
      return {{"hik", options_.lambda * selected.sum()}};
    case Reduction::Mean:
      return {{"hik", options_.lambda * selected.mean()}};
  }
  throw Error("semantic_regularizer: unknown reduction");
}

}  // namespace wscsl::semantic_regularizer

WSCSL_PLUGIN(semantic_regularizer, "0.1.0",
             "DiscoverNet's histogram-intersection semantic regularizer") {
  registrar.add<wscsl::Loss, wscsl::semantic_regularizer::SemanticRegularizer>(
      "semantic_regularizer");
}
