// ASEN++'s second-stage loss (Dong et al., TIP 2021, as released): the triplet hinge of the global
// branch and of the local branch, and the alignment of each image's two embeddings, weighted
// 1, 0.1 and 0.1 in the released s2.yaml. It reads the terms condition_module/asen_pp publishes
// with stage = "joint".
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::asen_pp_joint {

struct AsenPpJointOptions {
  double margin = 0.2;            // SOLVER.MARGIN
  double global_weight = 1.0;     // SOLVER.GLOBAL_WEIGHT
  double local_weight = 0.1;      // SOLVER.LOCAL_WEIGHT of s2.yaml
  double alignment_weight = 0.1;  // SOLVER.ALIGN_WEIGHT of s2.yaml
};

class AsenPpJoint final : public Loss {
 public:
  using Options = AsenPpJointOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit AsenPpJoint(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::asen_pp_joint
