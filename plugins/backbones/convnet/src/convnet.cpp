#include "convnet.hpp"

#include <cmath>

#include <fmt/format.h>

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

#include "wscsl/config/image_fields.hpp"
#include "wscsl/config/limits.hpp"
#include "wscsl/nn/batch_norm.hpp"

namespace wscsl::convnet {

Schema<ConvNetOptions> ConvNet::schema() {
  using O = ConvNetOptions;
  Schema<O> s(
      "Small conv net for 32-px images: `depth` stages of `convs_per_stage` × (3×3 conv, "
      "batch norm, ReLU), downsampling by 2 per stage, global average pool, linear to "
      "`embedding_dim`.");
  // Doubled over at most 5 stages, so the widest stage stays within kMaxLayerSize.
  s.field("width", &O::width, "Channels of the first stage (doubled at each stage).")
      .min(1)
      .max(kMaxLayerSize / 16);
  s.field("depth", &O::depth, "Number of stages.").min(1).max(5);
  s.field("convs_per_stage", &O::convs_per_stage, "3×3 convolutions per stage.").min(1).max(4);
  s.field("embedding_dim", &O::embedding_dim, "Size D of the embedding φ.")
      .min(1)
      .max(kMaxLayerSize);
  s.field("downsample", &O::downsample,
          "\"maxpool\": the first stage runs at full resolution and 2×2 max-pooling separates "
          "stages; \"stride\": every stage, the first included, starts with a stride-2 "
          "convolution (about 7× cheaper on 32-px inputs).",
          EnumChoices<Downsample>{
              {Downsample::MaxPool, "maxpool", "2×2 max-pooling between full-resolution stages"},
              {Downsample::Stride, "stride", "a stride-2 convolution opens every stage"}});
  s.field("pooling", &O::pooling,
          "\"average\": global average pooling before the linear layer (the reference trunk); "
          "\"flatten\": the linear layer sees the whole final feature map, which keeps the "
          "spatial layout that orientation needs.",
          EnumChoices<Pooling>{{Pooling::Average, "average", "global average pooling"},
                               {Pooling::Flatten, "flatten", "the whole final feature map"}});
  s.field("normalization", &O::normalization,
          "\"batch\": batch norm after every convolution; \"none\": no normalisation, so that "
          "a step does not depend on how a batch is split (e.g. over data-parallel processes, "
          "which each normalise by their own share).",
          EnumChoices<Normalization>{{Normalization::Batch, "batch", "batch norm"},
                                     {Normalization::None, "none", "no normalisation"}});
  image_fields(s, "input", &O::input_channels, &O::input_height, &O::input_width);
  return s;
}

ConvNet::ConvNet(const Options& options) : options_(options) {
  namespace nn = torch::nn;
  features_ = register_module("features", nn::Sequential());
  std::int64_t in = options.input_channels;
  std::int64_t out = options.width;
  std::int64_t height = options.input_height, width = options.input_width;
  const bool strided = options.downsample == Downsample::Stride;
  for (std::int64_t stage = 0; stage < options.depth; ++stage) {
    if (stage > 0 && !strided) {
      features_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
      height /= 2, width /= 2;
    }
    if (strided) height = (height + 1) / 2, width = (width + 1) / 2;  // 3×3, padding 1, stride 2
    for (std::int64_t i = 0; i < options.convs_per_stage; ++i) {
      const std::int64_t stride = strided && i == 0 ? 2 : 1;
      // Batch norm's shift makes a bias redundant.
      const bool bias = options.normalization == Normalization::None;
      nn::Conv2d conv(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(bias));
      // He initialisation over fan-out, as the reference ResNet trunk does.
      nn::init::normal_(conv->weight, 0.0, std::sqrt(2.0 / static_cast<double>(9 * out)));
      features_->push_back(conv);
      if (options.normalization == Normalization::Batch)
        features_->push_back(wscsl::nn::BatchNorm2d(out));
      features_->push_back(nn::ReLU(nn::ReLUOptions(true)));
      in = out;
    }
    out *= 2;
  }
  if (height < 1 || width < 1)
    throw Error(fmt::format("convnet: {} stages shrink a {}×{} image to nothing", options.depth,
                            options.input_height, options.input_width));
  const std::int64_t features = flattens() ? in * height * width : in;
  head_ = register_module("head", nn::Linear(features, options.embedding_dim));
}

bool ConvNet::flattens() const {
  switch (options_.pooling) {
    case Pooling::Average:
      return false;
    case Pooling::Flatten:
      return true;
  }
  return false;
}

Contract ConvNet::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::FeatureMap}};
  return c;
}

std::int64_t ConvNet::feature_map_channels() const {
  return options_.width << (options_.depth - 1);
}

torch::Tensor ConvNet::forward_images(const torch::Tensor& images) {
  return forward_with_map(images).phi;
}

BackboneOutput ConvNet::forward_with_map(const torch::Tensor& images) {
  // Channels-last lets oneDNN run the small convolutions noticeably faster on CPU.
  const torch::Tensor x = images.contiguous(at::MemoryFormat::ChannelsLast);
  torch::Tensor maps = features_->forward(x);
  torch::Tensor phi = head_->forward(flattens() ? maps.flatten(1) : maps.mean({2, 3}));
  return {std::move(phi), std::move(maps)};
}

}  // namespace wscsl::convnet

WSCSL_PLUGIN(convnet, "0.1.0", "Small convolutional backbone for 32-px images") {
  registrar.add<wscsl::Backbone, wscsl::convnet::ConvNet>("convnet");
}
