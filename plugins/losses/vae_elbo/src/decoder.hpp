// The decoders of the CBIR paper's appendix (Pérez Rey et al., Tables 1–2), adapted to the
// dataset's image size: latent z → Bernoulli logits of every pixel. The paper's last layer is a
// sigmoid; the loss applies it inside a numerically stable binary cross-entropy instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>

namespace wscsl::vae_elbo {

struct DecoderShape {
  std::int64_t latent_dim = 10;
  std::int64_t channels = 3;
  std::int64_t height = 32;
  std::int64_t width = 32;
};

class Decoder : public torch::nn::Module {
 public:
  // "mnist_crb" (Table 2): Dense 128 → Dense 256 → Dense 64·(H/4)·(W/4) → ConvT 64 (3×3, stride 2)
  //   → ConvT C (3×3, stride 2).
  // "modelnet40" (Table 1): Dense 256 → Dense 64·(H/16)·(W/16) → ConvT 64, 32, 32 (4×4, stride 2)
  //   → ConvT C (4×4, stride 2).
  // Every hidden layer has a ReLU.
  static const std::vector<std::string>& architectures();
  // How many times an architecture halves the image side: H and W must be divisible by 2^n.
  static std::int64_t halvings(const std::string& architecture);

  Decoder(const std::string& architecture, const DecoderShape& shape);
  torch::Tensor forward(const torch::Tensor& z);  // [B, L] → logits [B, C, H, W]

 private:
  std::int64_t start_height_, start_width_;
  torch::nn::Sequential dense_{nullptr}, deconv_{nullptr};
};

}  // namespace wscsl::vae_elbo
