// CSN-style condition masks m_1..m_K ∈ R^D (Veit et al., CVPR 2017), as CSN, SCE-Net and
// DiscoverNet's LSN reimplementation initialise and apply them: ψ_k(x) = φ(x) ⊙ m_k.
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/config/schema.hpp"

namespace wscsl::nn {

enum class MaskInit {
  Fixed,  // disjoint 0/1 blocks, mask k is 1 on [k·⌊D/K⌋, (k+1)·⌊D/K⌋); never trained; no ReLU
  Learned,  // N(0.9, 0.7) everywhere; trained; ReLU applied whenever the masks are used
  Prein,    // 0.1 everywhere and 1 on mask k's disjoint block; trained; ReLU applied
};

// The spellings of MaskInit for a plugin's option, and that option's documentation.
const EnumChoices<MaskInit>& mask_init_choices();
std::string mask_init_doc();

class ConditionMasks : public torch::nn::Module {
 public:
  ConditionMasks(std::int64_t count, std::int64_t dim, MaskInit initialization);

  // The masks as applied, [K, D]: ReLU(weight) when trained, the fixed blocks otherwise.
  torch::Tensor masks() const;
  // The parameter itself, without the ReLU of trained masks, [K, D]: what the released type-aware
  // network applies at test time.
  const torch::Tensor& unrectified() const { return weight_; }
  // φ [B, D] → φ ⊙ m_k for every k: [B, K, D].
  torch::Tensor apply(const torch::Tensor& phi) const;
  // ‖m_k‖₁ of every applied mask: [K].
  torch::Tensor l1_norms() const;
  bool trained() const { return trained_; }
  std::int64_t count() const { return weight_.size(0); }

 private:
  bool trained_;
  torch::Tensor weight_;  // [K, D], the nn.Embedding weight of the reference code
};

}  // namespace wscsl::nn
