// The attention of ASEN (Ma et al., AAAI 2020) and ASEN++ (Dong et al., TIP 2021) over a backbone's
// feature map, conditioned on an attribute: where in the image to look (spatial attention) and
// which of the attended channels to keep (channel attention). Every attribute's attention is
// computed for every image at once (K queries), so that ψ holds one embedding per attribute.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/nn/batch_norm.hpp"

namespace wscsl::nn {

// How the spatial attention scores a position's transformed features m [d] against a query q [d].
enum class AttentionScore {
  ScaledDot,  // Σ_c m_c q_c / √d (ASENet_V2, ASEN++)
  Learned,    // tanh(w · (m ⊙ q) + b): a 1×1 convolution to one channel, then tanh (ASENet)
};

// Attribute-aware spatial attention over a feature map X [B, C, h, w] for K queries q_k [d]:
//   M = tanh(BN(conv1×1(X))) [B, d, h, w] (BN only when asked),
//   α_bk = softmax over the h·w positions p of score(M_{b,·,p}, q_k),
//   x_bk = Σ_p α_bkp X_{b,·,p} [C].
class SpatialAttentionImpl : public torch::nn::Module {
 public:
  SpatialAttentionImpl(std::int64_t channels, std::int64_t query_dim, AttentionScore score,
                       bool batch_norm);
  // α [B, K, h, w] of `map` [B, C, h, w] for `queries` [K, d]; each map sums to 1.
  torch::Tensor weights(const torch::Tensor& map, const torch::Tensor& queries);
  // x [B, K, C]: the positions of `map` [B, C, h, w] summed under `weights` [B, K, h, w].
  static torch::Tensor attend(const torch::Tensor& map, const torch::Tensor& weights);

 private:
  AttentionScore score_;
  torch::nn::Conv2d conv_{nullptr};
  BatchNorm2d bn_{nullptr};                // with batch_norm only
  torch::nn::Conv2d score_conv_{nullptr};  // AttentionScore::Learned only
};
TORCH_MODULE(SpatialAttention);

// Attribute-aware channel attention: x ⊙ σ(W₂ ReLU(W₁ [x ; r] + b₁) + b₂) for attended features x
// [B, K, C] and the attributes' features r [K, R], with C / reduction hidden units.
class ChannelAttentionImpl : public torch::nn::Module {
 public:
  ChannelAttentionImpl(std::int64_t channels, std::int64_t attribute_dim, std::int64_t reduction);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& attributes);

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(ChannelAttention);

// The sizes of an AttributeBranch.
struct AttributeBranchSizes {
  std::int64_t channels = 0;       // C, the feature map's
  std::int64_t attribute_dim = 0;  // A, the attributes' embedding
  std::int64_t common_dim = 0;     // d, where the map meets the attribute
  std::int64_t reduction = 0;      // the channel attention's C / hidden
  std::int64_t embedding_dim = 0;  // E
};

// One attribute-conditioned embedding of a feature map from the attributes' embeddings e_k [K, A],
// as ASENet_V2 and each branch of ASEN++ compute it: the spatial attention's query
// q_k = tanh(W_q e_k + b_q) [d] (scaled dot-product score), the channel attention's
// r_k = ReLU(W_r e_k + b_r) [A], then ψ_k = W_e y_k + b_e [E] (not normalised). Its layers are
// registered on `owner` as spatial_transform, channel_transform, spatial, channel and head.
class AttributeBranch {
 public:
  AttributeBranch(torch::nn::Module& owner, const AttributeBranchSizes& sizes, bool batch_norm);
  // α [B, K, h, w] of `map` [B, C, h, w] under `attributes` [K, A].
  torch::Tensor attention(const torch::Tensor& map, const torch::Tensor& attributes);
  // ψ [B, K, E] of `map` [B, C, h, w] under `attributes` [K, A], with the attention α it used.
  std::pair<torch::Tensor, torch::Tensor> embed(const torch::Tensor& map,
                                                const torch::Tensor& attributes);

 private:
  torch::nn::Linear spatial_transform_{nullptr}, channel_transform_{nullptr};
  SpatialAttention spatial_{nullptr};
  ChannelAttention channel_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace wscsl::nn
