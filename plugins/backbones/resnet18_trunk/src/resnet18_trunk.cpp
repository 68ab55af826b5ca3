#include "resnet18_trunk.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/init.h>

#include "wscsl/config/image_fields.hpp"
#include "wscsl/config/limits.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/util/text.hpp"

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

Resnet18Trunk::Resnet18Trunk(const Options& options) : options_(options) {
  namespace nn = torch::nn;
  conv1_ = register_module(
      "conv1",
      nn::Conv2d(
          nn::Conv2dOptions(options.input_channels, 64, 7).stride(2).padding(3).bias(false)));
  bn1_ = register_module("bn1", wscsl::nn::BatchNorm2d(64));
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
  if (!options.weights.empty()) load_weights(options.weights);
  if (options.freeze_bn == FreezeBn::All)
    for (wscsl::nn::BatchNorm2d bn : batch_norms()) {
      bn->weight.set_requires_grad(false);
      bn->bias.set_requires_grad(false);
    }
}

void Resnet18Trunk::load_weights(const std::string& file) {
  nn::StateDictMatch match;
  // torchvision's network goes on to layer4 and a 1000-class fc, which the trunk removes; files
  // from before PyTorch 0.4.1 (the authors' resnet18-5c106cde) have no num_batches_tracked, and a
  // torchvision file has no fc_embed, which then keeps its initialisation.
  match.ignored = [](const std::string& name) {
    return starts_with(name, "layer4.") || starts_with(name, "fc.");
  };
  match.optional = [](const std::string& name) {
    return ends_with(name, ".num_batches_tracked") || starts_with(name, "fc_embed.");
  };
  const std::vector<std::string> problems =
      nn::load_state_dict(*this, nn::read_state_dict(file), match);
  if (!problems.empty())
    throw DataError(fmt::format("{}: the weights do not fit this trunk ({} problem{}):\n  {}", file,
                                problems.size(), problems.size() == 1 ? "" : "s",
                                fmt::join(problems, "\n  ")));
}

std::vector<wscsl::nn::BatchNorm2d> Resnet18Trunk::batch_norms() const {
  std::vector<wscsl::nn::BatchNorm2d> out;
  for (const auto& m : modules(/*include_self=*/false))
    if (auto bn = std::dynamic_pointer_cast<wscsl::nn::BatchNorm2dImpl>(m)) out.emplace_back(bn);
  return out;
}

void Resnet18Trunk::train(bool on) {
  torch::nn::Module::train(on);
  if (options_.freeze_bn != FreezeBn::None)
    for (wscsl::nn::BatchNorm2d bn : batch_norms())
      bn->eval();
}

torch::Tensor Resnet18Trunk::stem(const torch::Tensor& images) {
  return torch::max_pool2d(torch::relu(bn1_->forward(conv1_->forward(images))), 3, 2, 1);
}

torch::Tensor Resnet18Trunk::features(const torch::Tensor& images) {
  const torch::Tensor maps = layer3_->forward(layer2_->forward(layer1_->forward(stem(images))));
  if (maps.size(2) != kPoolSide || maps.size(3) != kPoolSide)
    throw Error(
        fmt::format("resnet18_trunk: a {}×{} image gives a {}×{} map, and the 7×7 pool "
                    "needs 112-px images",
                    images.size(2), images.size(3), maps.size(2), maps.size(3)));
  return torch::avg_pool2d(maps, kPoolSide).flatten(1);
}

torch::Tensor Resnet18Trunk::forward_images(const torch::Tensor& images) {
  return fc_embed_->forward(features(images));
}

}  // namespace wscsl::resnet18_trunk

WSCSL_PLUGIN(resnet18_trunk, "0.1.0",
             "ResNet-18 trunk without layer4 (CSN / SCE-Net / DiscoverNet reference backbone)") {
  registrar.add<wscsl::Backbone, wscsl::resnet18_trunk::Resnet18Trunk>("resnet18_trunk");
}
