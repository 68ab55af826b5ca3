#include "vae_encoder.hpp"

#include <vector>

#include <fmt/format.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/config/image_fields.hpp"

namespace wscsl::vae_encoder {

Schema<VaeEncoderOptions> VaeEncoder::schema() {
  using O = VaeEncoderOptions;
  Schema<O> s(
      "VAE encoder of the CBIR paper (Pérez Rey et al., Tables 1–2): convolutions and dense "
      "layers with ReLU, then two dense heads; φ = [μ ; log σ²] of size 2L.");
  s.field("latent_dim", &O::latent_dim, "L, the latent size (the paper: 10).").min(1);
  s.field("architecture", &O::architecture,
          "\"mnist_crb\" (Table 2: conv 32 and 64, 3×3 stride 2 → dense 256 → dense 128) or "
          "\"modelnet40\" (Table 1: conv 32, 32, 64, 64, 4×4 stride 2 → dense 256).")
      .choices({"mnist_crb", "modelnet40"});
  image_fields(s, "input", &O::input_channels, &O::input_height, &O::input_width);
  return s;
}

VaeEncoder::VaeEncoder(const Options& options) : options_(options) {
  namespace nn = torch::nn;
  const bool modelnet = options.architecture == "modelnet40";
  const std::vector<std::int64_t> channels =
      modelnet ? std::vector<std::int64_t>{32, 32, 64, 64} : std::vector<std::int64_t>{32, 64};
  const std::vector<std::int64_t> units =
      modelnet ? std::vector<std::int64_t>{256} : std::vector<std::int64_t>{256, 128};
  const std::int64_t kernel = modelnet ? 4 : 3;
  std::int64_t height = options.input_height.value_or(32), width = options.input_width.value_or(32);
  std::int64_t in = options.input_channels.value_or(3);
  features_ = register_module("features", nn::Sequential());
  for (std::int64_t out : channels) {
    // Stride 2 with padding 1 halves the side (rounding up for 3×3 kernels, down for 4×4).
    features_->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(2).padding(1)));
    features_->push_back(nn::ReLU());
    height = (height + 2 - kernel) / 2 + 1;
    width = (width + 2 - kernel) / 2 + 1;
    in = out;
  }
  if (height < 1 || width < 1)
    throw Error(fmt::format("vae_encoder: the {} convolutions shrink a {}×{} image to nothing",
                            options.architecture, options.input_height.value_or(32),
                            options.input_width.value_or(32)));
  features_->push_back(nn::Flatten());
  in *= height * width;
  for (std::int64_t out : units) {
    features_->push_back(nn::Linear(in, out));
    features_->push_back(nn::ReLU());
    in = out;
  }
  mean_ = register_module("mean", nn::Linear(in, options.latent_dim));
  log_var_ = register_module("log_var", nn::Linear(in, options.latent_dim));
}

torch::Tensor VaeEncoder::forward_images(const torch::Tensor& images) {
  const torch::Tensor h = features_->forward(images);
  return torch::cat({mean_->forward(h), log_var_->forward(h)}, 1);
}

}  // namespace wscsl::vae_encoder

WSCSL_PLUGIN(vae_encoder, "0.1.0", "VAE encoder of the CBIR paper (Pérez Rey et al.)") {
  registrar.add<wscsl::Backbone, wscsl::vae_encoder::VaeEncoder>("vae_encoder");
}
