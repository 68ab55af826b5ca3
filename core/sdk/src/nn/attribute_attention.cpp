#include "wscsl/nn/attribute_attention.hpp"

#include <cmath>

namespace wscsl::nn {

SpatialAttentionImpl::SpatialAttentionImpl(std::int64_t channels, std::int64_t query_dim,
                                           AttentionScore score, bool batch_norm)
    : score_(score) {
  conv_ =
      register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, query_dim, 1)));
  if (batch_norm) bn_ = register_module("bn", BatchNorm2d(query_dim));
  if (score == AttentionScore::Learned)
    score_conv_ =
        register_module("score_conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(query_dim, 1, 1)));
}

torch::Tensor SpatialAttentionImpl::weights(const torch::Tensor& map,
                                            const torch::Tensor& queries) {
  torch::Tensor m = conv_->forward(map);
  if (bn_) m = bn_->forward(m);
  m = torch::tanh(m).flatten(2);  // [B, d, h·w]
  torch::Tensor scores;
  switch (score_) {
    case AttentionScore::ScaledDot:
      scores = torch::einsum("bcp,kc->bkp", {m, queries}) /
               std::sqrt(static_cast<double>(queries.size(1)));
      break;
    case AttentionScore::Learned: {
      // w · (m ⊙ q) = m · (w ⊙ q): one product per query, not a [B, K, d, h·w] tensor.
      const torch::Tensor w = score_conv_->weight.view({1, -1});
      scores = torch::tanh(torch::einsum("bcp,kc->bkp", {m, queries * w}) + score_conv_->bias);
      break;
    }
  }
  return torch::softmax(scores, 2).view({map.size(0), queries.size(0), map.size(2), map.size(3)});
}

torch::Tensor SpatialAttentionImpl::attend(const torch::Tensor& map, const torch::Tensor& weights) {
  return torch::bmm(weights.flatten(2), map.flatten(2).transpose(1, 2));
}

ChannelAttentionImpl::ChannelAttentionImpl(std::int64_t channels, std::int64_t attribute_dim,
                                           std::int64_t reduction) {
  fc1_ = register_module("fc1", torch::nn::Linear(channels + attribute_dim, channels / reduction));
  fc2_ = register_module("fc2", torch::nn::Linear(channels / reduction, channels));
}

torch::Tensor ChannelAttentionImpl::forward(const torch::Tensor& x,
                                            const torch::Tensor& attributes) {
  const torch::Tensor r = attributes.unsqueeze(0).expand({x.size(0), -1, -1});
  const torch::Tensor gate =
      torch::sigmoid(fc2_->forward(torch::relu(fc1_->forward(torch::cat({x, r}, 2)))));
  return x * gate;
}

AttributeBranch::AttributeBranch(torch::nn::Module& owner, const AttributeBranchSizes& sizes,
                                 bool batch_norm) {
  namespace tnn = torch::nn;
  spatial_transform_ = owner.register_module("spatial_transform",
                                             tnn::Linear(sizes.attribute_dim, sizes.common_dim));
  channel_transform_ = owner.register_module("channel_transform",
                                             tnn::Linear(sizes.attribute_dim, sizes.attribute_dim));
  spatial_ = owner.register_module(
      "spatial",
      SpatialAttention(sizes.channels, sizes.common_dim, AttentionScore::ScaledDot, batch_norm));
  channel_ = owner.register_module(
      "channel", ChannelAttention(sizes.channels, sizes.attribute_dim, sizes.reduction));
  head_ = owner.register_module("head", tnn::Linear(sizes.channels, sizes.embedding_dim));
}

torch::Tensor AttributeBranch::attention(const torch::Tensor& map,
                                         const torch::Tensor& attributes) {
  return spatial_->weights(map, torch::tanh(spatial_transform_->forward(attributes)));
}

std::pair<torch::Tensor, torch::Tensor> AttributeBranch::embed(const torch::Tensor& map,
                                                               const torch::Tensor& attributes) {
  torch::Tensor alpha = attention(map, attributes);
  const torch::Tensor attended = SpatialAttentionImpl::attend(map, alpha);
  const torch::Tensor gated =
      channel_->forward(attended, torch::relu(channel_transform_->forward(attributes)));
  return {head_->forward(gated), std::move(alpha)};
}

}  // namespace wscsl::nn
