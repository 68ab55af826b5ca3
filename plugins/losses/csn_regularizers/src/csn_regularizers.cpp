#include "csn_regularizers.hpp"

#include <cmath>

namespace wscsl::csn_regularizers {

Schema<CsnRegularizersOptions> CsnRegularizers::schema() {
  using O = CsnRegularizersOptions;
  Schema<O> s(
      "CSN's L_W and L_M as the released CSN and SCE-Net code normalise them: L_W = (‖Φ_a‖_F + "
      "‖Φ_c‖_F + ‖Φ_f‖_F)/3/√B over the batch's unmasked embeddings φ, L_M = the batch mean of "
      "the module's per-triplet mask L1 norm (aux \"mask_l1\").");
  s.field("embedding_weight", &O::embedding_weight,
          "λ1 of the embedding-norm term L_W (released: embed_loss = 5e-3; 0 omits the term).")
      .min(0.0);
  s.field("mask_weight", &O::mask_weight,
          "λ2 of the mask term L_M (released: mask_loss = 5e-4; 0 omits the term).")
      .min(0.0);
  s.check([](const O& o, FieldChecker& c) {
    if (o.embedding_weight == 0.0 && o.mask_weight == 0.0)
      c.error("mask_weight", "embedding_weight and mask_weight are both 0: nothing to regularise");
  });
  return s;
}

Contract CsnRegularizers::contract_of(const Options& options) {
  Contract c;
  if (options.mask_weight > 0.0) c.needs.push_back({Resource::AuxTerm, "mask_l1"});
  return c;
}

std::map<std::string, torch::Tensor> CsnRegularizers::compute_impl(const LossInput& input) {
  std::map<std::string, torch::Tensor> terms;
  if (options_.embedding_weight > 0.0) {
    const ComparedItems in = gather(input.items, input.comparisons);
    const double batch = static_cast<double>(input.comparisons.size());
    // Φ_a, Φ_c and Φ_f hold one row per triplet: an item in several triplets counts in each.
    const torch::Tensor frobenius =
        in.first.phi.norm() + in.second.phi.norm() + in.third.phi.norm();
    terms["embedding_norm"] = options_.embedding_weight * frobenius / 3.0 / std::sqrt(batch);
  }
  if (options_.mask_weight > 0.0) {
    terms["mask_l1"] = options_.mask_weight * input.scores.aux.at("mask_l1").mean();
  }
  return terms;
}

}  // namespace wscsl::csn_regularizers

WSCSL_PLUGIN(csn_regularizers, "0.1.0", "CSN's embedding-norm and mask-L1 regularizers") {
  registrar.add<wscsl::Loss, wscsl::csn_regularizers::CsnRegularizers>("csn_regularizers");
}
