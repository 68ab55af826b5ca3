// The encoders of Pérez Rey, Holenderski and Jarnikov, "Content-Based Image Retrieval from
// Weakly-Supervised Disentangled Representations" (appendix, Tables 1–2), for a Gaussian
// posterior q(z|x) = N(μ(x), diag σ²(x)): φ(x) = [μ(x) ; log σ²(x)] ∈ R^{2L}.
#pragma once

#include <cstdint>

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/nn/vae_architecture.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::vae_encoder {

struct VaeEncoderOptions {
  std::int64_t latent_dim = 10;
  nn::VaeArchitecture architecture = nn::VaeArchitecture::MnistCrb;
  std::int64_t input_channels = 0;  // from the dataset
  std::int64_t input_height = 0;    // from the dataset
  std::int64_t input_width = 0;     // from the dataset
};

class VaeEncoder final : public Backbone {
 public:
  using Options = VaeEncoderOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit VaeEncoder(const Options& options);

  std::int64_t embedding_dim() const override { return 2 * options_.latent_dim; }

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override;

 private:
  Options options_;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Linear mean_{nullptr}, log_var_{nullptr};
};

}  // namespace wscsl::vae_encoder
