#include "vae_latents.hpp"

#include <fmt/format.h>

#include "wscsl/nn/distances.hpp"

namespace wscsl::vae_latents {

Schema<VaeLatentsOptions> VaeLatents::schema() {
  using O = VaeLatentsOptions;
  Schema<O> s(
      "A VAE's latent means as embeddings: φ = [μ ; log σ²], ψ_j = μ_j for each of the L = D/2 "
      "latent dimensions (K = L, E = 1); triplets are predicted with ‖μ_a − μ_b‖₂, weights 1/L.");
  s.field("input_dim", &O::input_dim,
          "D = 2L, the size of φ = [μ ; log σ²] (set from the backbone).")
      .min(2)
      .derived(facts::backbone_embedding_dim);
  s.check([](const O& o, FieldChecker& c) {
    if (o.input_dim % 2 != 0)
      c.error("input_dim", fmt::format("must be even: φ = [μ ; log σ²] holds two L-vectors, got {}",
                                       o.input_dim));
  });
  return s;
}

Contract VaeLatents::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::PairScores}};
  c.needs = {{Resource::GaussianPosterior}};
  return c;
}

torch::Tensor VaeLatents::embed_impl(const EmbedInput& input) {
  return means(input.phi).unsqueeze(2);
}

ComparisonScores VaeLatents::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  const ComparedItems in = gather(items, comparisons);
  ComparisonScores s;
  s.second_distances = distances(in.first.psi, in.second.psi);
  s.weights = torch::full_like(s.second_distances, 1.0 / static_cast<double>(latent_));
  s.fused_second = nn::euclidean_distance(means(in.first.phi), means(in.second.phi));
  if (comparisons.are_triplets()) {
    s.third_distances = distances(in.first.psi, in.third.psi);
    s.fused_third = nn::euclidean_distance(means(in.first.phi), means(in.third.phi));
  }
  return s;
}

}  // namespace wscsl::vae_latents

WSCSL_PLUGIN(vae_latents, "0.1.0", "A VAE's latent means as one embedding per latent dimension") {
  registrar.add<wscsl::ConditionModule, wscsl::vae_latents::VaeLatents>("vae_latents");
}
