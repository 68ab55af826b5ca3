#include "decoder.hpp"

#include <fmt/format.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include "wscsl/error.hpp"

namespace wscsl::vae_elbo {

std::int64_t Decoder::halvings(nn::VaeArchitecture architecture) {
  switch (architecture) {
    case nn::VaeArchitecture::MnistCrb:
      return 2;
    case nn::VaeArchitecture::ModelNet40:
      return 4;
  }
  return 0;
}

Decoder::Decoder(nn::VaeArchitecture architecture, const DecoderShape& shape) {
  const std::int64_t factor = std::int64_t{1} << halvings(architecture);
  if (shape.height % factor != 0 || shape.width % factor != 0)
    throw Error(
        fmt::format("the {} decoder doubles the image side {} times: the image size "
                    "{}×{} must be divisible by {}",
                    spelling_of(nn::vae_architecture_choices(), architecture),
                    halvings(architecture), shape.height, shape.width, factor));
  start_height_ = shape.height / factor;
  start_width_ = shape.width / factor;
  const std::int64_t start = 64 * start_height_ * start_width_;
  dense_ = register_module("dense", torch::nn::Sequential());
  deconv_ = register_module("deconv", torch::nn::Sequential());
  std::vector<std::int64_t> units, channels;
  std::int64_t kernel = 4, output_padding = 0;
  switch (architecture) {
    case nn::VaeArchitecture::ModelNet40:
      units = {256, start};
      channels = {64, 64, 32, 32, shape.channels};
      break;
    case nn::VaeArchitecture::MnistCrb:
      units = {128, 256, start};
      channels = {64, 64, shape.channels};
      kernel = 3, output_padding = 1;  // 3×3, stride 2, padding 1 doubles with an output padding
      break;
  }
  std::int64_t in = shape.latent_dim;
  for (std::int64_t out : units) {
    dense_->push_back(torch::nn::Linear(in, out));
    dense_->push_back(torch::nn::ReLU());
    in = out;
  }
  for (std::size_t i = 1; i < channels.size(); ++i) {
    deconv_->push_back(torch::nn::ConvTranspose2d(
        torch::nn::ConvTranspose2dOptions(channels[i - 1], channels[i], kernel)
            .stride(2)
            .padding(1)
            .output_padding(output_padding)));
    if (i + 1 < channels.size()) deconv_->push_back(torch::nn::ReLU());
  }
}

torch::Tensor Decoder::forward(const torch::Tensor& z) {
  const torch::Tensor maps = dense_->forward(z).view({z.size(0), 64, start_height_, start_width_});
  return deconv_->forward(maps);
}

}  // namespace wscsl::vae_elbo
