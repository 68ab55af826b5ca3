#include "resnet50_trunk.hpp"

#include "wscsl/config/image_fields.hpp"

namespace wscsl::resnet50_trunk {

Schema<Resnet50TrunkOptions> Resnet50Trunk::schema() {
  using O = Resnet50TrunkOptions;
  Schema<O> s(
      "ResNet-50 trunk of ASEN / ASEN++: torchvision's ResNet-50 up to layer3 (as released) or "
      "layer4, without avgpool and fc. The last layer's map is the feature map ([B, 1024, 14, 14] "
      "for 224-px images after layer3); φ is its average over the positions (D = its channels). "
      "Randomly initialised as torchvision, or loaded from a torchvision ResNet-50 state dict "
      "(ImageNet weights, as the papers).");
  s.field("last_layer", &O::last_layer,
          "The last stage: 3 ends after layer3 (1024 channels), as the released ASEN and ASEN++ "
          "code; 4 keeps torchvision's layer4 (2048 channels, half the resolution).")
      .choices({3, 4});
  s.field("weights", &O::weights,
          "A torchvision ResNet-50 state dict (saved with torch.save; torchvision's published "
          "files go through scripts/convert-weights.py first) whose conv1, bn1 and layers up to "
          "last_layer replace the random initialisation; later layers and fc are ignored. Empty: "
          "random initialisation.")
      .path();
  image_fields(s, "input", &O::input_channels, &O::input_height, &O::input_width);
  return s;
}

Contract Resnet50Trunk::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::FeatureMap}};
  return c;
}

namespace {

// ResNet-50's stages hold 3, 4, 6 and 3 bottleneck blocks.
std::vector<std::int64_t> stages_up_to(std::int64_t last_layer) {
  std::vector<std::int64_t> blocks = {3, 4, 6, 3};
  blocks.resize(static_cast<std::size_t>(last_layer));
  return blocks;
}

}  // namespace

Resnet50Trunk::Resnet50Trunk(const Options& options)
    : trunk_(*this, wscsl::nn::ResidualBlock::Bottleneck, stages_up_to(options.last_layer),
             options.input_channels) {
  // torchvision's initialisation: He's normal over fan-out for the convolutions, batch norm γ = 1,
  // β = 0 (LibTorch's default).
  wscsl::nn::he_initialise(*this);
  std::vector<std::string> ignored = {"fc."};
  if (options.last_layer == 3) ignored.push_back("layer4.");
  if (!options.weights.empty()) wscsl::nn::load_resnet_weights(*this, options.weights, ignored, {});
}

torch::Tensor Resnet50Trunk::forward_images(const torch::Tensor& images) {
  return forward_with_map(images).phi;
}

BackboneOutput Resnet50Trunk::forward_with_map(const torch::Tensor& images) {
  torch::Tensor maps = trunk_.forward(images);
  torch::Tensor phi = maps.mean({2, 3});
  return {std::move(phi), std::move(maps)};
}

}  // namespace wscsl::resnet50_trunk

WSCSL_PLUGIN(
    resnet50_trunk, "0.1.0",
    "ResNet-50 trunk without avgpool and fc (ASEN / ASEN++ backbone), with its feature map") {
  registrar.add<wscsl::Backbone, wscsl::resnet50_trunk::Resnet50Trunk>("resnet50_trunk");
}
