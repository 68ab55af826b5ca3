#include "transformer_branch.hpp"

#include <cmath>

#include <torch/nn/init.h>

namespace wscsl::discovernet {

TransformerBranch::TransformerBranch(std::int64_t dim, std::int64_t pairs)
    : pairs_(pairs), temperature_(std::sqrt(2.0 * static_cast<double>(dim))) {
  namespace nn = torch::nn;
  const std::int64_t model = 2 * dim;
  auto projection = [&](const char* name) {
    nn::Linear l = register_module(name, nn::Linear(nn::LinearOptions(model, model).bias(false)));
    nn::init::normal_(l->weight, 0.0, std::sqrt(2.0 / static_cast<double>(model + model)));
    return l;
  };
  query_ = projection("query");
  key_ = projection("key");
  value_ = projection("value");
  mix_ = register_module("mix", nn::Linear(nn::LinearOptions(model, model).bias(false)));
  nn::init::xavier_normal_(mix_->weight);
  out_ = register_module("out", nn::Linear(model, dim));
  attention_dropout_ = register_module("attention_dropout", nn::Dropout(kAttentionDropout));
  output_dropout_ = register_module("output_dropout", nn::Dropout(kOutputDropout));
}

torch::Tensor TransformerBranch::forward(const torch::Tensor& anchor, const torch::Tensor& close,
                                         const torch::Tensor& far) {
  const torch::Tensor tokens = pair_tokens(anchor, close, far, pairs_);  // [B, P, 2D]
  const torch::Tensor keys = torch::cat({tokens, tokens}, 1);            // [B, 2P, 2D]
  const torch::Tensor scores =
      torch::bmm(query_->forward(tokens), key_->forward(keys).transpose(1, 2)) / temperature_;
  const torch::Tensor attention = attention_dropout_->forward(torch::softmax(scores, 2));
  const torch::Tensor attended = torch::bmm(attention, value_->forward(keys));
  const torch::Tensor mixed = output_dropout_->forward(mix_->forward(attended)) + tokens;
  return out_->forward(mixed.sum(1));
}

}  // namespace wscsl::discovernet
