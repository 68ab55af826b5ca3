#include "lsn.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::lsn {

Schema<LsnOptions> Lsn::schema() {
  using O = LsnOptions;
  Schema<O> s(
      "LSN (Nigam et al., ICCV 2019) as DiscoverNet's reimplementation: ψ_k = normalize(φ ⊙ m_k), "
      "F.pairwise_distance per embedding; a triplet is predicted with the embedding that "
      "satisfies it best. Train it with loss/lsn_min.");
  condition_options::input_dim(s, &O::input_dim);
  condition_options::num_embeddings(
      s, &O::num_embeddings,
      "K, the number of latent embeddings (default: the dataset's number of conditions).");
  condition_options::masks(s, &O::masks);
  return s;
}

Contract Lsn::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::AuxTerm, "mask_l1"}};
  return c;
}

Lsn::Lsn(const Options& options) : d_(options.input_dim) {
  masks_ = register_module(
      "masks", std::make_shared<nn::ConditionMasks>(options.num_embeddings, d_, options.masks));
}

torch::Tensor Lsn::embed_impl(const EmbedInput& input) {
  return nn::normalize_clamped(masks_->apply(input.phi), -1);
}

torch::Tensor Lsn::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

ComparisonScores Lsn::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  const ComparedItems in = gather(items, comparisons);
  const torch::Tensor close = distances(in.first.psi, in.second.psi);
  const torch::Tensor far = distances(in.first.psi, in.third.psi);
  // The embedding with the largest d_far − d_close has the smallest triplet loss for any margin.
  const torch::Tensor best = (far - close).argmax(1).detach();
  ComparisonScores s =
      nn::expected_distances(close, far, nn::condition_one_hot(best, num_embeddings()));
  s.aux["mask_l1"] = masks_->l1_norms().mean().expand({comparisons.size()});
  return s;
}

}  // namespace wscsl::lsn

WSCSL_PLUGIN(lsn, "0.1.0", "Latent Similarity Networks (Nigam et al., ICCV 2019)") {
  registrar.add<wscsl::ConditionModule, wscsl::lsn::Lsn>("lsn");
}
