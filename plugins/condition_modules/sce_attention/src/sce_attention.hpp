// SCE-Net (Tan, Vasileva, Saenko, Plummer, ICCV 2019): K condition masks over a shared embedding
// and a condition-weight branch that reads the whole triplet and weights the masked embeddings
// into one fused embedding E(v) = Σ_k w_k(τ) ψ_k(v); distances are taken between fused embeddings.
#pragma once

#include <cstdint>

#include <torch/nn/modules/linear.h>

#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::sce_attention {

struct SceAttentionOptions {
  std::int64_t input_dim = 0;                  // D, from the backbone
  std::int64_t num_embeddings = 0;             // K (num_concepts), defaults to the conditions
  nn::MaskInit masks = nn::MaskInit::Learned;  // the README's training command uses --learned
  std::int64_t hidden = 32;
  bool normalize = true;  // released code: v/(‖v‖+1e-10) on ψ_k and on the branch inputs
};

class SceAttention final : public ConditionModule {
 public:
  using Options = SceAttentionOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit SceAttention(const Options& options);

  std::int64_t num_embeddings() const override { return masks_->count(); }
  std::int64_t output_dim() const override { return d_; }

  // w(τ) [B, K]: softmax(Linear(ReLU(Linear([φ̂a; φ̂f; φ̂c])))), the reference's (x, y, z) order.
  torch::Tensor condition_weights(const torch::Tensor& phi_anchor, const torch::Tensor& phi_close,
                                  const torch::Tensor& phi_far);

 protected:
  torch::Tensor embed_impl(const torch::Tensor& phi) override;
  TripletScores score_impl(const TripletInput& input) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  torch::Tensor maybe_normalize(const torch::Tensor& v) const;
  Options options_;
  std::int64_t d_;
  std::shared_ptr<nn::ConditionMasks> masks_;
  torch::nn::Linear hidden_{nullptr}, logits_{nullptr};
};

}  // namespace wscsl::sce_attention
