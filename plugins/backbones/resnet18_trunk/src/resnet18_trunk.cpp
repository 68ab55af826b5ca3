#include "resnet18_trunk.hpp"

#include <cmath>

#include <fmt/format.h>
#include <torch/nn/init.h>

#include "wscsl/config/image_fields.hpp"
#include "wscsl/config/limits.hpp"

namespace wscsl::resnet18_trunk {
namespace {

constexpr std::int64_t kPoolSide = 7;  // the reference's nn.AvgPool2d(7)

std::int64_t halve(std::int64_t side) {  // a stride-2 layer with "same" padding
  return (side - 1) / 2 + 1;
}

torch::nn::Sequential layer(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return torch::nn::Sequential(BasicBlock(in, out, stride), BasicBlock(out, out, 1));
}

}  // namespace

std::int64_t trunk_output_side(std::int64_t input_side) {
  return halve(halve(halve(halve(input_side))));
}

Schema<Resnet18TrunkOptions> Resnet18Trunk::schema() {
  using O = Resnet18TrunkOptions;
  Schema<O> s(
      "ResNet-18 trunk of the CSN / SCE-Net / DiscoverNet code: conv 7×7 → max-pool → layer1-3 "
      "(layer4 removed) → 7×7 average pool of the 256-channel map → Linear(256, D). Needs 112-px "
      "images (97 to 112 px give the 7×7 map); randomly initialised (no pretrained weights are "
      "available offline).");
  s.field("embedding_dim", &O::embedding_dim, "Size D of the embedding φ (fc_embed).")
      .min(1)
      .max(kMaxLayerSize);
  image_fields(s, "input", &O::input_channels, &O::input_height, &O::input_width);
  s.check([](const O& o, FieldChecker& c) {
    for (const auto& [name, side] :
         {std::pair{"input_height", o.input_height}, std::pair{"input_width", o.input_width}}) {
      if (trunk_output_side(side) != kPoolSide)
        c.error(name, fmt::format("the trunk ends in a fixed 7×7 average pool, which needs "
                                  "112-px images (97 to 112 px); the dataset's are {} px",
                                  side));
    }
  });
  return s;
}

Resnet18Trunk::Resnet18Trunk(const Options& options) : options_(options) {
  namespace nn = torch::nn;
  conv1_ = register_module(
      "conv1",
      nn::Conv2d(
          nn::Conv2dOptions(options.input_channels, 64, 7).stride(2).padding(3).bias(false)));
  bn1_ = register_module("bn1", nn::BatchNorm2d(64));
  layer1_ = register_module("layer1", layer(64, 64, 1));
  layer2_ = register_module("layer2", layer(64, 128, 2));
  layer3_ = register_module("layer3", layer(128, 256, 2));
  fc_embed_ = register_module("fc_embed", nn::Linear(256, options.embedding_dim));
  // He initialisation over fan-out for every convolution; batch norm γ = 1, β = 0 (LibTorch's
  // default); fc_embed keeps nn.Linear's default, as the reference.
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<nn::Conv2d>()) {
      const auto& k = c->options.kernel_size();
      const double fan_out = static_cast<double>(k->at(0) * k->at(1) * c->options.out_channels());
      nn::init::normal_(c->weight, 0.0, std::sqrt(2.0 / fan_out));
    }
  }
}

torch::Tensor Resnet18Trunk::stem(const torch::Tensor& images) {
  return torch::max_pool2d(torch::relu(bn1_->forward(conv1_->forward(images))), 3, 2, 1);
}

torch::Tensor Resnet18Trunk::forward_images(const torch::Tensor& images) {
  const torch::Tensor maps = layer3_->forward(layer2_->forward(layer1_->forward(stem(images))));
  if (maps.size(2) != kPoolSide || maps.size(3) != kPoolSide)
    throw Error(
        fmt::format("resnet18_trunk: a {}×{} image gives a {}×{} map, and the 7×7 pool "
                    "needs 112-px images",
                    images.size(2), images.size(3), maps.size(2), maps.size(3)));
  return fc_embed_->forward(torch::avg_pool2d(maps, kPoolSide).flatten(1));
}

}  // namespace wscsl::resnet18_trunk

WSCSL_PLUGIN(resnet18_trunk, "0.1.0",
             "ResNet-18 trunk without layer4 (CSN / SCE-Net / DiscoverNet reference backbone)") {
  registrar.add<wscsl::Backbone, wscsl::resnet18_trunk::Resnet18Trunk>("resnet18_trunk");
}
