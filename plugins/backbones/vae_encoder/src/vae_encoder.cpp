#include "vae_encoder.hpp"

#include <vector>

#include <fmt/format.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/config/image_fields.hpp"
#include "wscsl/config/limits.hpp"

namespace wscsl::vae_encoder {

Schema<VaeEncoderOptions> VaeEncoder::schema() {
  using O = VaeEncoderOptions;
  Schema<O> s(
      "VAE encoder of the CBIR paper (Pérez Rey et al., Tables 1–2): convolutions and dense "
      "layers with ReLU, then two dense heads; φ = [μ ; log σ²] of size 2L.");
  s.field("latent_dim", &O::latent_dim, "L, the latent size (the paper: 10).")
      .min(1)
      .max(kMaxLayerSize);
  s.field("architecture", &O::architecture,
          "\"mnist_crb\" (Table 2: conv 32 and 64, 3×3 stride 2 → dense 256 → dense 128) or "
          "\"modelnet40\" (Table 1: conv 32, 32, 64, 64, 4×4 stride 2 → dense 256).",
          nn::vae_architecture_choices());
  image_fields(s, "input", &O::input_channels, &O::input_height, &O::input_width);
  return s;
}

namespace {

struct EncoderShape {
  std::vector<std::int64_t> channels;  // of the stride-2 convolutions
  std::vector<std::int64_t> units;     // of the dense layers
  std::int64_t kernel;
};

EncoderShape encoder_shape(wscsl::nn::VaeArchitecture architecture) {
  switch (architecture) {
    case wscsl::nn::VaeArchitecture::MnistCrb:
      return {{32, 64}, {256, 128}, 3};
    case wscsl::nn::VaeArchitecture::ModelNet40:
      return {{32, 32, 64, 64}, {256}, 4};
  }
  throw Error("vae_encoder: unknown architecture");
}

}  // namespace

Contract VaeEncoder::contract_of(const Options&) {
  Contract c;
  c.provides.push_back({Resource::GaussianPosterior});
  return c;
}

VaeEncoder::VaeEncoder(const Options& options) : options_(options) {
  namespace nn = torch::nn;
  const auto [channels, units, kernel] = encoder_shape(options.architecture);
  std::int64_t height = options.input_height, width = options.input_width;
  std::int64_t in = options.input_channels;
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
    throw Error(
        fmt::format("vae_encoder: the {} convolutions shrink a {}×{} image to nothing",
                    spelling_of(wscsl::nn::vae_architecture_choices(), options.architecture),
                    options.input_height, options.input_width));
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
