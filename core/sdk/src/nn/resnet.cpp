#include "wscsl/nn/resnet.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/init.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::nn {
namespace {

torch::nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t kernel,
                       std::int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// A 1×1 conv (stride s) + BN when the block changes the shape; an empty holder otherwise.
torch::nn::Sequential shortcut(std::int64_t in, std::int64_t out, std::int64_t stride) {
  if (stride == 1 && in == out) return torch::nn::Sequential(nullptr);
  return torch::nn::Sequential(conv(in, out, 1, stride), BatchNorm2d(out));
}

}  // namespace

std::int64_t block_out_channels(ResidualBlock block, std::int64_t planes) {
  switch (block) {
    case ResidualBlock::Basic:
      return planes;
    case ResidualBlock::Bottleneck:
      return 4 * planes;
  }
  return planes;
}

BasicBlockImpl::BasicBlockImpl(std::int64_t in_channels, std::int64_t planes, std::int64_t stride) {
  conv1_ = register_module("conv1", conv(in_channels, planes, 3, stride));
  bn1_ = register_module("bn1", BatchNorm2d(planes));
  conv2_ = register_module("conv2", conv(planes, planes, 3, 1));
  bn2_ = register_module("bn2", BatchNorm2d(planes));
  if (auto s = shortcut(in_channels, planes, stride))
    downsample_ = register_module("downsample", s);
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  const torch::Tensor out =
      bn2_->forward(conv2_->forward(torch::relu(bn1_->forward(conv1_->forward(x)))));
  return torch::relu(out + (downsample_ ? downsample_->forward(x) : x));
}

BottleneckImpl::BottleneckImpl(std::int64_t in_channels, std::int64_t planes, std::int64_t stride) {
  const std::int64_t out = block_out_channels(ResidualBlock::Bottleneck, planes);
  conv1_ = register_module("conv1", conv(in_channels, planes, 1, 1));
  bn1_ = register_module("bn1", BatchNorm2d(planes));
  conv2_ = register_module("conv2", conv(planes, planes, 3, stride));
  bn2_ = register_module("bn2", BatchNorm2d(planes));
  conv3_ = register_module("conv3", conv(planes, out, 1, 1));
  bn3_ = register_module("bn3", BatchNorm2d(out));
  if (auto s = shortcut(in_channels, out, stride)) downsample_ = register_module("downsample", s);
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
  out = torch::relu(bn2_->forward(conv2_->forward(out)));
  out = bn3_->forward(conv3_->forward(out));
  return torch::relu(out + (downsample_ ? downsample_->forward(x) : x));
}

ResNetStages::ResNetStages(torch::nn::Module& owner, ResidualBlock block,
                           const std::vector<std::int64_t>& blocks, std::int64_t in_channels) {
  conv1_ = owner.register_module(
      "conv1", torch::nn::Conv2d(
                   torch::nn::Conv2dOptions(in_channels, 64, 7).stride(2).padding(3).bias(false)));
  bn1_ = owner.register_module("bn1", BatchNorm2d(64));
  std::int64_t in = 64;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::int64_t planes = std::int64_t{64} << i;
    torch::nn::Sequential stage;
    for (std::int64_t b = 0; b < blocks[i]; ++b) {
      const std::int64_t stride = (i > 0 && b == 0) ? 2 : 1;
      switch (block) {
        case ResidualBlock::Basic:
          stage->push_back(BasicBlock(in, planes, stride));
          break;
        case ResidualBlock::Bottleneck:
          stage->push_back(Bottleneck(in, planes, stride));
          break;
      }
      in = block_out_channels(block, planes);
    }
    layers_.push_back(owner.register_module("layer" + std::to_string(i + 1), stage));
  }
  out_channels_ = in;
}

torch::Tensor ResNetStages::forward(const torch::Tensor& images) {
  torch::Tensor x = torch::max_pool2d(torch::relu(bn1_->forward(conv1_->forward(images))), 3, 2, 1);
  for (torch::nn::Sequential& layer : layers_)
    x = layer->forward(x);
  return x;
}

void he_initialise(torch::nn::Module& module) {
  for (auto& m : module.modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      const auto& k = c->options.kernel_size();
      const double fan_out = static_cast<double>(k->at(0) * k->at(1) * c->options.out_channels());
      torch::nn::init::normal_(c->weight, 0.0, std::sqrt(2.0 / fan_out));
    }
  }
}

void load_resnet_weights(torch::nn::Module& trunk, const std::string& file,
                         const std::vector<std::string>& ignored,
                         const std::vector<std::string>& optional) {
  const auto under = [](const std::vector<std::string>& prefixes, const std::string& name) {
    for (const std::string& prefix : prefixes)
      if (starts_with(name, prefix)) return true;
    return false;
  };
  StateDictMatch match;
  match.ignored = [&](const std::string& name) { return under(ignored, name); };
  match.optional = [&](const std::string& name) {
    return ends_with(name, ".num_batches_tracked") || under(optional, name);
  };
  const std::vector<std::string> problems = load_state_dict(trunk, read_state_dict(file), match);
  if (!problems.empty())
    throw DataError(fmt::format("{}: the weights do not fit this trunk ({} problem{}):\n  {}", file,
                                problems.size(), problems.size() == 1 ? "" : "s",
                                fmt::join(problems, "\n  ")));
}

std::vector<BatchNorm2d> batch_norms(const torch::nn::Module& module) {
  std::vector<BatchNorm2d> out;
  for (const auto& m : module.modules(/*include_self=*/false))
    if (auto bn = std::dynamic_pointer_cast<BatchNorm2dImpl>(m)) out.emplace_back(bn);
  return out;
}

}  // namespace wscsl::nn
