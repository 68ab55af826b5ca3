#include "specialized.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::specialized {

Schema<SpecializedOptions> Specialized::schema() {
  using O = SpecializedOptions;
  Schema<O> s(
      "Specialized triplet networks (CSN's baseline): ψ_c = W_c φ + b_c, one linear head per "
      "condition, selected by the triplet's condition label (supervised); F.pairwise_distance.");
  condition_options::input_dim(s, &O::input_dim);
  condition_options::num_conditions(
      s, &O::num_conditions,
      "K, one head per condition (set from the dataset: the triplet's label selects it).");
  condition_options::embedding_dim(s, &O::embedding_dim,
                                   "E, the size of each head's embedding (default: D).");
  return s;
}

Contract Specialized::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::PairScores}};
  c.needs = {{Resource::TripletConditions}};
  return c;
}

Specialized::Specialized(const Options& options)
    : k_(options.num_conditions), e_(options.embedding_dim) {
  // One Linear(D, K·E) is K independent Linear(D, E) heads with nn.Linear's initialisation.
  heads_ = register_module("heads", torch::nn::Linear(options.input_dim, k_ * e_));
}

torch::Tensor Specialized::embed_impl(const EmbedInput& input) {
  const torch::Tensor& phi = input.phi;
  return heads_->forward(phi).view({phi.size(0), k_, e_});
}

torch::Tensor Specialized::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

ComparisonScores Specialized::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  return nn::conditioned_distances(*this, items, comparisons);
}

}  // namespace wscsl::specialized

WSCSL_PLUGIN(specialized, "0.1.0", "One supervised embedding head per condition (CSN baseline)") {
  registrar.add<wscsl::ConditionModule, wscsl::specialized::Specialized>("specialized");
}
