#include "sequential_branch.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::discovernet {

SequentialBranch::SequentialBranch(std::int64_t dim) {
  namespace nn = torch::nn;
  if (dim % 2 != 0)
    throw Error(fmt::format("the sequential g needs an even D for its residual, got {}", dim));
  lstm_ = register_module(
      "lstm", nn::LSTM(nn::LSTMOptions(dim, dim / 2).num_layers(kLayers).bidirectional(true)));
  out_ = register_module("out", nn::Linear(nn::LinearOptions(3 * dim, dim).bias(false)));
}

torch::Tensor SequentialBranch::forward(const torch::Tensor& anchor, const torch::Tensor& close,
                                        const torch::Tensor& far) {
  const torch::Tensor sequence = torch::stack({anchor, far, close}, 0);  // [3, B, D], time first
  const torch::Tensor states = std::get<0>(lstm_->forward(sequence)) + sequence;
  return out_->forward(states.permute({1, 0, 2}).reshape({anchor.size(0), -1}));
}

}  // namespace wscsl::discovernet
