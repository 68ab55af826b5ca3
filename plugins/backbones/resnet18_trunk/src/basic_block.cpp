#include "basic_block.hpp"

namespace wscsl::resnet18_trunk {
namespace {

torch::nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t kernel,
                       std::int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(std::int64_t in_channels, std::int64_t out_channels,
                               std::int64_t stride) {
  conv1_ = register_module("conv1", conv(in_channels, out_channels, 3, stride));
  bn1_ = register_module("bn1", wscsl::nn::BatchNorm2d(out_channels));
  conv2_ = register_module("conv2", conv(out_channels, out_channels, 3, 1));
  bn2_ = register_module("bn2", wscsl::nn::BatchNorm2d(out_channels));
  if (stride != 1 || in_channels != out_channels)
    downsample_ = register_module("downsample",
                                  torch::nn::Sequential(conv(in_channels, out_channels, 1, stride),
                                                        wscsl::nn::BatchNorm2d(out_channels)));
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  const torch::Tensor out =
      bn2_->forward(conv2_->forward(torch::relu(bn1_->forward(conv1_->forward(x)))));
  return torch::relu(out + (downsample_ ? downsample_->forward(x) : x));
}

}  // namespace wscsl::resnet18_trunk
