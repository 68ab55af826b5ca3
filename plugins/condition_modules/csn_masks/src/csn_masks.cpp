#include "csn_masks.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"

namespace wscsl::csn_masks {

Schema<CsnMasksOptions> CsnMasks::schema() {
  using O = CsnMasksOptions;
  Schema<O> s(
      "CSN (Veit et al., CVPR 2017): ψ_c = φ ⊙ m_c with one mask per condition, selected by the "
      "triplet's condition label (supervised); F.pairwise_distance on the masked embeddings.");
  s.field("input_dim", &O::input_dim, "D, the size of φ (set from the backbone).")
      .min(1)
      .derived(facts::backbone_embedding_dim);
  s.field("num_conditions", &O::num_conditions,
          "K, one mask per condition (set from the dataset: the triplet's label selects it).")
      .min(1)
      .derived(facts::dataset_num_conditions);
  s.field("masks", &O::masks, nn::mask_init_doc() + " The released default is fixed.",
          nn::mask_init_choices());
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

torch::Tensor CsnMasks::embed_impl(const torch::Tensor& phi) {
  return masks_->apply(phi);
}

torch::Tensor CsnMasks::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

ComparisonScores CsnMasks::score_impl(const ItemFeatures& items, const Comparisons& comparisons) {
  ComparisonScores s = nn::conditioned_distances(*this, items, comparisons);
  s.aux["mask_l1"] = masks_->l1_norms().index_select(0, comparisons.conditions);
  return s;
}

}  // namespace wscsl::csn_masks

WSCSL_PLUGIN(csn_masks, "0.1.0",
             "Conditional Similarity Networks' masks (Veit et al., CVPR 2017)") {
  registrar.add<wscsl::ConditionModule, wscsl::csn_masks::CsnMasks>("csn_masks");
}
