#include "csn_masks.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::csn_masks {

Schema<CsnMasksOptions> CsnMasks::schema() {
  using O = CsnMasksOptions;
  Schema<O> s(
      "CSN (Veit et al., CVPR 2017): ψ_c = φ ⊙ m_c with one mask per condition, selected by the "
      "triplet's condition label (supervised); F.pairwise_distance on the masked embeddings.");
  condition_options::input_dim(s, &O::input_dim);
  condition_options::num_conditions(
      s, &O::num_conditions,
      "K, one mask per condition (set from the dataset: the triplet's label selects it).");
  condition_options::masks(s, &O::masks, "The released default is fixed.");
  return s;
}

Contract CsnMasks::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::AuxTerm, "mask_l1"}, {Resource::PairScores}};
  c.needs = {{Resource::TripletConditions}};
  return c;
}

CsnMasks::CsnMasks(const Options& options) : d_(options.input_dim) {
  masks_ = register_module(
      "masks", std::make_shared<nn::ConditionMasks>(options.num_conditions, d_, options.masks));
}

torch::Tensor CsnMasks::embed_impl(const EmbedInput& input) {
  return masks_->apply(input.phi);
}

torch::Tensor CsnMasks::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

ComparisonScores CsnMasks::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  ComparisonScores s = nn::conditioned_distances(*this, items, comparisons);
  s.aux["mask_l1"] = masks_->l1_norms().index_select(0, comparisons.conditions);
  return s;
}

}  // namespace wscsl::csn_masks

WSCSL_PLUGIN(csn_masks, "0.1.0",
             "Conditional Similarity Networks' masks (Veit et al., CVPR 2017)") {
  registrar.add<wscsl::ConditionModule, wscsl::csn_masks::CsnMasks>("csn_masks");
}
