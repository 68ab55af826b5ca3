// CSN's regularizers (Veit et al., CVPR 2017, Eq. 7), with the released code's normalisations
// (also SCE-Net's): L_W, the norm of the unmasked embeddings φ, and L_M, the L1 norm of the masks
// a module publishes as TripletScores::aux["mask_l1"].
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::csn_regularizers {

struct CsnRegularizersOptions {
  double embedding_weight = 5e-3;  // embed_loss
  double mask_weight = 5e-4;       // mask_loss
};

class CsnRegularizers final : public Loss {
 public:
  using Options = CsnRegularizersOptions;
  static Schema<Options> schema();
  // L_M needs the module's mask norms (aux "mask_l1"); without it (mask_weight = 0) nothing.
  static Contract contract_of(const Options& options);
  explicit CsnRegularizers(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::csn_regularizers
