#include "prototypical.hpp"

#include <torch/nn/functional/loss.h>

namespace wscsl::prototypical {

Schema<PrototypicalOptions> PrototypicalLoss::schema() {
  using O = PrototypicalOptions;
  Schema<O> s(
      "Normalized-temperature loss (CBIR paper, Eq. 7): the groups are the (anchor, close) pairs "
      "of the batch, h(x) = ψ(x) flattened, prototypes z_n = mean of the group, L = mean over "
      "the 2B images of d(h, z_own)/τ + log Σ_n exp(−d(h, z_n)/τ), d = ‖·‖₂².");
  s.field("temperature", &O::temperature, "τ (the paper uses 1).").greater_than(0.0);
  return s;
}

std::map<std::string, torch::Tensor> PrototypicalLoss::compute_impl(const LossInput& input) {
  const ComparedItems in = gather(input.items, input.comparisons);
  const std::int64_t b = input.comparisons.size();
  const torch::Tensor anchor = in.first.psi.reshape({b, -1});
  const torch::Tensor close = in.second.psi.reshape({b, -1});
  const torch::Tensor prototypes = 0.5 * (anchor + close);      // [B, F]
  const torch::Tensor points = torch::cat({anchor, close}, 0);  // [2B, F]
  const torch::Tensor squared =
      (points.unsqueeze(1) - prototypes.unsqueeze(0)).pow(2).sum(2);  // [2B, B]
  const torch::Tensor group =
      torch::arange(b, anchor.options().dtype(torch::kLong)).repeat({2});  // [2B]
  namespace F = torch::nn::functional;
  return {{"prototypical", F::cross_entropy(-squared / options_.temperature, group)}};
}

}  // namespace wscsl::prototypical

WSCSL_PLUGIN(prototypical, "0.1.0", "Normalized-temperature prototypical loss (CBIR paper)") {
  registrar.add<wscsl::Loss, wscsl::prototypical::PrototypicalLoss>("prototypical");
}
