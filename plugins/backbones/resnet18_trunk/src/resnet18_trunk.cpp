#include "resnet18_trunk.hpp"

#include <fmt/format.h>

#include "wscsl/config/image_fields.hpp"
#include "wscsl/config/limits.hpp"

namespace wscsl::resnet18_trunk {
namespace {

constexpr std::int64_t kPoolSide = 7;  // the reference's nn.AvgPool2d(7)

std::int64_t halve(std::int64_t side) {  // a stride-2 layer with "same" padding
  return (side - 1) / 2 + 1;
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
      "images (97 to 112 px give the 7×7 map); randomly initialised, or loaded from a torchvision "
      "ResNet-18 state dict (ImageNet weights, as the papers' \"with pretrain\" rows).");
  s.field("embedding_dim", &O::embedding_dim, "Size D of the embedding φ (fc_embed).")
      .min(1)
      .max(kMaxLayerSize);
  s.field("weights", &O::weights,
          "A torchvision ResNet-18 state dict (saved with torch.save; see the README for "
          "torchvision's published files) whose conv1, bn1 and layer1-3 replace the random "
          "initialisation; layer4 and fc are ignored, fc_embed is loaded when present. Empty: "
          "random initialisation.")
      .path();
  s.field("freeze_bn", &O::freeze_bn,
          "Batch normalisation while training: \"none\" trains it as usual; \"statistics\" "
          "keeps its running statistics (the released --fix_BN); \"all\" keeps the statistics "
          "and γ, β (the released --freeze_BN).",
          EnumChoices<FreezeBn>{{FreezeBn::None, "none", "statistics updated, γ and β trained"},
                                {FreezeBn::Statistics, "statistics", "running statistics fixed"},
                                {FreezeBn::All, "all", "running statistics, γ and β fixed"}});
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

Contract Resnet18Trunk::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::FeatureMap}};
  return c;
}

// ResNet-18's stem and its first three stages of two basic blocks each.
Resnet18Trunk::Resnet18Trunk(const Options& options)
    : options_(options),
      trunk_(*this, wscsl::nn::ResidualBlock::Basic, {2, 2, 2}, options.input_channels) {
  fc_embed_ = register_module("fc_embed", torch::nn::Linear(256, options.embedding_dim));
  // He initialisation over fan-out for every convolution; batch norm γ = 1, β = 0 (LibTorch's
  // default); fc_embed keeps nn.Linear's default, as the reference.
  wscsl::nn::he_initialise(*this);
  // torchvision's network goes on to layer4 and a 1000-class fc, which the trunk removes; a
  // torchvision file has no fc_embed, which then keeps its initialisation.
  if (!options.weights.empty())
    wscsl::nn::load_resnet_weights(*this, options.weights, {"layer4.", "fc."}, {"fc_embed."});
  if (options.freeze_bn == FreezeBn::All)
    for (wscsl::nn::BatchNorm2d bn : wscsl::nn::batch_norms(*this)) {
      bn->weight.set_requires_grad(false);
      bn->bias.set_requires_grad(false);
    }
}

void Resnet18Trunk::train(bool on) {
  torch::nn::Module::train(on);
  if (options_.freeze_bn != FreezeBn::None)
    for (wscsl::nn::BatchNorm2d bn : wscsl::nn::batch_norms(*this))
      bn->eval();
}

torch::Tensor Resnet18Trunk::feature_map(const torch::Tensor& images) {
  torch::Tensor maps = trunk_.forward(images);
  if (maps.size(2) != kPoolSide || maps.size(3) != kPoolSide)
    throw Error(
        fmt::format("resnet18_trunk: a {}×{} image gives a {}×{} map, and the 7×7 pool "
                    "needs 112-px images",
                    images.size(2), images.size(3), maps.size(2), maps.size(3)));
  return maps;
}

torch::Tensor Resnet18Trunk::features(const torch::Tensor& images) {
  return torch::avg_pool2d(feature_map(images), kPoolSide).flatten(1);
}

torch::Tensor Resnet18Trunk::forward_images(const torch::Tensor& images) {
  return forward_with_map(images).phi;
}

BackboneOutput Resnet18Trunk::forward_with_map(const torch::Tensor& images) {
  torch::Tensor maps = feature_map(images);
  torch::Tensor phi = fc_embed_->forward(torch::avg_pool2d(maps, kPoolSide).flatten(1));
  return {std::move(phi), std::move(maps)};
}

}  // namespace wscsl::resnet18_trunk

WSCSL_PLUGIN(resnet18_trunk, "0.1.0",
             "ResNet-18 trunk without layer4 (CSN / SCE-Net / DiscoverNet reference backbone)") {
  registrar.add<wscsl::Backbone, wscsl::resnet18_trunk::Resnet18Trunk>("resnet18_trunk");
}
