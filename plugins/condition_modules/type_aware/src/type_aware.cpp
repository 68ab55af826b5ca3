#include "type_aware.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::type_aware {

Schema<TypeAwareOptions> TypeAware::schema() {
  using O = TypeAwareOptions;
  Schema<O> s(
      "Type-aware embedding network (Vasileva et al., ECCV 2018): ψ_c = φ ⊙ m_c with one mask "
      "per type-pair condition, each masked embedding L2-normalised, the pair's condition "
      "given by its two items' types while training and at test time; F.pairwise_distance.");
  condition_options::input_dim(s, &O::input_dim);
  condition_options::num_conditions(s, &O::num_conditions,
                                    "K, one mask per type-pair condition (set from the dataset).");
  condition_options::masks(s, &O::masks, "The released model: learned (--learned).");
  s.field("l2_normalize", &O::l2_normalize,
          "Divide each masked embedding by its L2 norm + 1e-10 (the released model's --l2_embed).");
  s.field("test_masks", &O::test_masks,
          "Masks applied in evaluation: \"unrectified\" = the parameters without the ReLU "
          "training applies (the released code's test-time path); \"rectified\" = ReLU(m_c), as "
          "in training.",
          EnumChoices<TestMasks>{
              {TestMasks::Unrectified, "unrectified",
               "the parameters without the ReLU training applies (the released code)"},
              {TestMasks::Rectified, "rectified", "ReLU(m_c), as in training"}})
      .only_when("masks = \"learned\" or \"prein\"",
                 [](const O& o) { return o.masks != nn::MaskInit::Fixed; });
  return s;
}

Contract TypeAware::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::AuxTerm, "mask_l1"}, {Resource::PairScores}};
  c.needs = {{Resource::TripletConditions}, {Resource::TypePairConditions}};
  return c;
}

TypeAware::TypeAware(const Options& options) : options_(options) {
  masks_ = register_module("masks", std::make_shared<nn::ConditionMasks>(
                                        options.num_conditions, options.input_dim, options.masks));
}

torch::Tensor TypeAware::embed_impl(const EmbedInput& input) {
  const bool rectified = is_training() || options_.test_masks == TestMasks::Rectified;
  const torch::Tensor masks = rectified ? masks_->masks() : masks_->unrectified();
  const torch::Tensor psi = input.phi.unsqueeze(1) * masks.unsqueeze(0);
  return options_.l2_normalize ? nn::normalize_offset(psi) : psi;
}

torch::Tensor TypeAware::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

ComparisonScores TypeAware::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  ComparisonScores s = nn::conditioned_distances(*this, items, comparisons);
  s.aux["mask_l1"] = masks_->l1_norms().index_select(0, comparisons.conditions);
  return s;
}

}  // namespace wscsl::type_aware

WSCSL_PLUGIN(type_aware, "0.1.0",
             "The type-aware embedding network's type-pair masks (Vasileva et al., ECCV 2018)") {
  registrar.add<wscsl::ConditionModule, wscsl::type_aware::TypeAware>("type_aware");
}
