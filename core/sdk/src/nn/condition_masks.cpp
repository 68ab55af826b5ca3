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

torch::Tensor initial_masks(std::int64_t count, std::int64_t dim, MaskInit initialization) {
  switch (initialization) {
    case MaskInit::Fixed:
      return block_masks(count, dim, 0.0f, 1.0f);
    case MaskInit::Prein:
      return block_masks(count, dim, 0.1f, 1.0f);
    case MaskInit::Learned:
      return torch::empty({count, dim}).normal_(0.9, 0.7);
  }
  throw Error("unknown condition mask initialisation");
}

}  // namespace

const EnumChoices<MaskInit>& mask_init_choices() {
  static const EnumChoices<MaskInit> choices = {
      {MaskInit::Fixed, "fixed", "disjoint 0/1 blocks of ⌊D/K⌋ dimensions, not trained"},
      {MaskInit::Learned, "learned", "N(0.9, 0.7), trained, ReLU in the forward pass"},
      {MaskInit::Prein, "prein", "0.1 with a block of 1, trained, ReLU in the forward pass"}};
  return choices;
}

std::string mask_init_doc() {
  return "Condition masks m_k: \"fixed\" = disjoint 0/1 blocks of ⌊D/K⌋ dimensions, not trained; "
         "\"learned\" = N(0.9, 0.7), trained, ReLU in the forward pass; \"prein\" = 0.1 with a "
         "block of 1, trained, ReLU in the forward pass.";
}

ConditionMasks::ConditionMasks(std::int64_t count, std::int64_t dim, MaskInit initialization)
    : trained_(initialization != MaskInit::Fixed) {
  if (count < 1 || dim < 1)
    throw Error(
        fmt::format("condition masks need K ≥ 1 and D ≥ 1, got K = {}, D = {}", count, dim));
  weight_ = register_parameter("weight", initial_masks(count, dim, initialization),
                               /*requires_grad=*/trained_);
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
