#include "single.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::single {

Schema<SingleOptions> Single::schema() {
  using O = SingleOptions;
  Schema<O> s(
      "The standard triplet network: one embedding ψ_1 = φ shared by every condition, "
      "F.pairwise_distance.");
  condition_options::input_dim(s, &O::input_dim);
  return s;
}

torch::Tensor Single::embed_impl(const EmbedInput& input) {
  return input.phi.unsqueeze(1);
}

torch::Tensor Single::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

Contract Single::contract_of(const Options&) {
  Contract c;
  c.provides.push_back({Resource::PairScores});
  return c;
}

ComparisonScores Single::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  const ComparedItems in = gather(items, comparisons);
  return nn::expected_distances(*this, in,
                                torch::ones({in.first.phi.size(0), 1}, in.first.phi.options()));
}

}  // namespace wscsl::single

WSCSL_PLUGIN(single, "0.1.0", "The standard triplet network: one embedding") {
  registrar.add<wscsl::ConditionModule, wscsl::single::Single>("single");
}
