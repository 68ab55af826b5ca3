#include "asen_pp_joint.hpp"

namespace wscsl::asen_pp_joint {

namespace {

// PyTorch's MarginRankingLoss(cos_close, cos_far, +1) on the distances 1 − cos: the batch mean
// of max(0, margin − (far − close)).
torch::Tensor hinge(const torch::Tensor& close, const torch::Tensor& far, double margin) {
  return torch::relu(margin - (far - close)).mean();
}

}  // namespace

Schema<AsenPpJointOptions> AsenPpJoint::schema() {
  using O = AsenPpJointOptions;
  Schema<O> s(
      "ASEN++'s second-stage loss as released: global_weight · hinge(global) + local_weight · "
      "hinge(local) + alignment_weight · Σ_{x ∈ a, p, n} mean(1 − cos(g_x, l_x)), each hinge "
      "the batch mean of max(0, margin − (d_far − d_close)) on d = 1 − cos under the triplet's "
      "attribute. Reads the terms of condition_module/asen_pp with stage = \"joint\".");
  s.field("margin", &O::margin, "γ of both hinges (SOLVER.MARGIN, released 0.2).").min(0.0);
  s.field("global_weight", &O::global_weight,
          "Weight of the global branch's hinge (SOLVER.GLOBAL_WEIGHT, released 1).")
      .min(0.0);
  s.field("local_weight", &O::local_weight,
          "Weight of the local branch's hinge (SOLVER.LOCAL_WEIGHT of s2.yaml, released 0.1).")
      .min(0.0);
  s.field("alignment_weight", &O::alignment_weight,
          "Weight of the alignment of each image's global and local embeddings "
          "(SOLVER.ALIGN_WEIGHT of s2.yaml, released 0.1).")
      .min(0.0);
  s.check([](const O& o, FieldChecker& c) {
    if (o.global_weight == 0.0 && o.local_weight == 0.0 && o.alignment_weight == 0.0)
      c.error("global_weight",
              "global_weight, local_weight and alignment_weight are all 0: nothing to train");
  });
  return s;
}

Contract AsenPpJoint::contract_of(const Options&) {
  Contract c;
  for (const char* name : {"global_close", "global_far", "local_close", "local_far", "alignment"})
    c.needs.push_back({Resource::AuxTerm, name});
  return c;
}

std::map<std::string, torch::Tensor> AsenPpJoint::compute_impl(const LossInput& input) {
  const auto& aux = input.scores.aux;
  return {{"global", options_.global_weight *
                         hinge(aux.at("global_close"), aux.at("global_far"), options_.margin)},
          {"local", options_.local_weight *
                        hinge(aux.at("local_close"), aux.at("local_far"), options_.margin)},
          {"alignment", options_.alignment_weight * aux.at("alignment").mean()}};
}

}  // namespace wscsl::asen_pp_joint

WSCSL_PLUGIN(asen_pp_joint, "0.1.0",
             "ASEN++'s second-stage loss: global and local hinges and their alignment") {
  registrar.add<wscsl::Loss, wscsl::asen_pp_joint::AsenPpJoint>("asen_pp_joint");
}
