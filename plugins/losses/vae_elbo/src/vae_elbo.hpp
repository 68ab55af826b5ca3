// The ELBO of the weakly supervised VAEs (β-VAE, GVAE, ML-VAE and their adaptive Ada- forms) on
// pairs of images that share some factors, as google-research/disentanglement_lib
// (methods/weak/weak_vae.py) computes it. The encoder is the backbone, φ = [μ ; log σ²]; this
// loss owns the decoder.
#pragma once

#include <cstdint>
#include <memory>

#include "decoder.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::vae_elbo {

// A diagonal Gaussian posterior per image: mean and log-variance, each [B, L].
struct Posterior {
  torch::Tensor mean, log_var;
};

// φ = [μ ; log σ²] [B, 2L] → its posterior.
Posterior split_posterior(const torch::Tensor& phi);

// δ_j = σ²₁/σ²₂ + (μ₂ − μ₁)²/σ²₂ − 1 + log σ²₂ − log σ²₁ = 2·KL(q₁ⱼ ‖ q₂ⱼ), per dimension [B, L].
torch::Tensor pair_divergence(const Posterior& first, const Posterior& second);

// The average posterior of a pair: "gvae" μ̄ = ½(μ₁+μ₂), σ̄² = ½(σ²₁+σ²₂) (disentanglement_lib);
// "gvae_std" σ̄ = ½(σ₁+σ₂) (the CBIR paper's text); "mlvae" σ̄² = 2σ²₁σ²₂/(σ²₁+σ²₂),
// μ̄ = ½(μ₁/σ²₁ + μ₂/σ²₂)·σ̄² (the product of the two Gaussians, renormalised).
enum class Average { Gvae, GvaeStd, MlVae };
Posterior average_posterior(const Posterior& first, const Posterior& second, Average average);

// AdaGVAE's shared dimensions [B, L] (bool): per pair, δ is put in two equal-width bins over
// [min δ, max δ] exactly as tf.histogram_fixed_width_bins does, index ⌊2(δ − min)/(max − min)⌋
// clipped to {0, 1}; index 0 (δ below τ = ½(min δ + max δ)) is shared, index 1 keeps its own
// posterior. When max δ = min δ the bins are undefined (0/0 in the reference): nothing is shared.
torch::Tensor adaptive_shared(const torch::Tensor& divergence);

// Each image's aggregated posterior: the average where `shared`, its own elsewhere.
Posterior aggregate(const Posterior& own, const Posterior& average, const torch::Tensor& shared);

// KL(q ‖ N(0, I)) per image [B]: ½ Σ_j (μ² + σ² − log σ² − 1).
torch::Tensor prior_kl(const Posterior& q);

enum class Sharing { Adaptive, Fixed, None };

struct VaeElboOptions {
  std::int64_t input_dim = 0;                                          // D = 2L, from the backbone
  std::int64_t image_channels = 0, image_height = 0, image_width = 0;  // from the dataset
  nn::VaeArchitecture decoder = nn::VaeArchitecture::MnistCrb;
  Sharing sharing = Sharing::Adaptive;
  Average average = Average::Gvae;
  std::int64_t shared_dims = 7;
  double beta = 1.0;
};

class VaeElbo final : public Loss {
 public:
  using Options = VaeElboOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit VaeElbo(const Options& options);

  // Which latent dimensions of each pair are shared [B, L], from the two posteriors.
  torch::Tensor shared_dimensions(const Posterior& first, const Posterior& second) const;

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
  std::int64_t latent_;
  std::shared_ptr<Decoder> decoder_;
};

}  // namespace wscsl::vae_elbo
