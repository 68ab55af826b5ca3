// The decoders of the CBIR paper's appendix (Pérez Rey et al., Tables 1–2), adapted to the
// dataset's image size: latent z → Bernoulli logits of every pixel. The paper's last layer is a
// sigmoid; the loss applies it inside a numerically stable binary cross-entropy instead.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>

#include "wscsl/nn/vae_architecture.hpp"

namespace wscsl::vae_elbo {

struct DecoderShape {
  std::int64_t latent_dim = 10;
  std::int64_t channels = 3;
  std::int64_t height = 32;
  std::int64_t width = 32;
};

class Decoder : public torch::nn::Module {
 public:
  // MnistCrb (Table 2): Dense 128 → Dense 256 → Dense 64·(H/4)·(W/4) → ConvT 64 (3×3, stride 2)
  //   → ConvT C (3×3, stride 2).
  // ModelNet40 (Table 1): Dense 256 → Dense 64·(H/16)·(W/16) → ConvT 64, 32, 32 (4×4, stride 2)
  //   → ConvT C (4×4, stride 2).
  // Every hidden layer has a ReLU.
  // How many times an architecture halves the image side: H and W must be divisible by 2^n.
  static std::int64_t halvings(nn::VaeArchitecture architecture);

  Decoder(nn::VaeArchitecture architecture, const DecoderShape& shape);
  torch::Tensor forward(const torch::Tensor& z);  // [B, L] → logits [B, C, H, W]

 private:
  std::int64_t start_height_, start_width_;
  torch::nn::Sequential dense_{nullptr}, deconv_{nullptr};
};

}  // namespace wscsl::vae_elbo
