#include "wscsl/nn/condition_masks.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::nn {
namespace {

// Row k is `on` over its disjoint block of ⌊D/K⌋ dimensions and `off` elsewhere (dimensions past
// K·⌊D/K⌋ belong to no block).
torch::Tensor block_masks(std::int64_t count, std::int64_t dim, float off, float on) {
  torch::Tensor m = torch::full({count, dim}, off);
  const std::int64_t block = dim / count;
  for (std::int64_t k = 0; k < count; ++k)
    m[k].narrow(0, k * block, block).fill_(on);
  return m;
}

}  // namespace

const std::vector<std::string>& ConditionMasks::initializations() {
  static const std::vector<std::string> names = {"fixed", "learned", "prein"};
  return names;
}

std::string ConditionMasks::option_doc() {
  return "Condition masks m_k: \"fixed\" = disjoint 0/1 blocks of ⌊D/K⌋ dimensions, not trained; "
         "\"learned\" = N(0.9, 0.7), trained, ReLU in the forward pass; \"prein\" = 0.1 with a "
         "block of 1, trained, ReLU in the forward pass.";
}

ConditionMasks::ConditionMasks(std::int64_t count, std::int64_t dim,
                               const std::string& initialization)
    : trained_(initialization != "fixed") {
  if (count < 1 || dim < 1)
    throw Error(
        fmt::format("condition masks need K ≥ 1 and D ≥ 1, got K = {}, D = {}", count, dim));
  torch::Tensor init;
  if (initialization == "fixed") {
    init = block_masks(count, dim, 0.0f, 1.0f);
  } else if (initialization == "prein") {
    init = block_masks(count, dim, 0.1f, 1.0f);
  } else if (initialization == "learned") {
    init = torch::empty({count, dim}).normal_(0.9, 0.7);
  } else {
    throw Error(fmt::format("unknown condition mask initialisation \"{}\"", initialization));
  }
  weight_ = register_parameter("weight", init, /*requires_grad=*/trained_);
}

torch::Tensor ConditionMasks::masks() const {
  return trained_ ? torch::relu(weight_) : weight_;
}

torch::Tensor ConditionMasks::apply(const torch::Tensor& phi) const {
  return phi.unsqueeze(1) * masks().unsqueeze(0);
}

torch::Tensor ConditionMasks::l1_norms() const {
  return masks().abs().sum(1);
}

}  // namespace wscsl::nn
