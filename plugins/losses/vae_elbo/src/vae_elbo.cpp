#include "vae_elbo.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <torch/nn/functional/loss.h>

#include "wscsl/config/image_fields.hpp"

namespace wscsl::vae_elbo {

Posterior split_posterior(const torch::Tensor& phi) {
  const std::int64_t latent = phi.size(1) / 2;
  return {phi.narrow(1, 0, latent), phi.narrow(1, latent, latent)};
}

torch::Tensor pair_divergence(const Posterior& first, const Posterior& second) {
  const torch::Tensor var_1 = first.log_var.exp(), var_2 = second.log_var.exp();
  return var_1 / var_2 + (second.mean - first.mean).pow(2) / var_2 - 1.0 + second.log_var -
         first.log_var;
}

Posterior average_posterior(const Posterior& first, const Posterior& second, Average average) {
  const torch::Tensor var_1 = first.log_var.exp(), var_2 = second.log_var.exp();
  const torch::Tensor mean = 0.5 * first.mean + 0.5 * second.mean;
  switch (average) {
    case Average::MlVae: {
      const torch::Tensor var = 2.0 * var_1 * var_2 / (var_1 + var_2);
      return {(first.mean / var_1 + second.mean / var_2) * var * 0.5, var.log()};
    }
    case Average::GvaeStd:
      return {mean,
              2.0 * (0.5 * (0.5 * first.log_var).exp() + 0.5 * (0.5 * second.log_var).exp()).log()};
    case Average::Gvae:
      return {mean, (0.5 * var_1 + 0.5 * var_2).log()};
  }
  throw Error("vae_elbo: unknown average");
}

torch::Tensor adaptive_shared(const torch::Tensor& divergence) {
  const torch::Tensor low = std::get<0>(divergence.min(1, /*keepdim=*/true));
  const torch::Tensor high = std::get<0>(divergence.max(1, /*keepdim=*/true));
  const torch::Tensor range = high - low;
  const torch::Tensor bin = torch::floor(2.0 * ((divergence - low) / range)).clamp(0, 1);
  return (bin == 0) & (range > 0);
}

Posterior aggregate(const Posterior& own, const Posterior& average, const torch::Tensor& shared) {
  return {torch::where(shared, average.mean, own.mean),
          torch::where(shared, average.log_var, own.log_var)};
}

torch::Tensor prior_kl(const Posterior& q) {
  return 0.5 * (q.mean.pow(2) + q.log_var.exp() - q.log_var - 1.0).sum(1);
}

Schema<VaeElboOptions> VaeElbo::schema() {
  using O = VaeElboOptions;
  Schema<O> s(
      "Weakly supervised VAE ELBO on the (anchor, close) pair of each triplet, which shares at "
      "least the triplet's factor: ½(R₁ + R₂) + β·½(KL(q̃₁‖N) + KL(q̃₂‖N)), with the shared latent "
      "dimensions of each image replaced by the pair's average posterior (disentanglement_lib's "
      "GroupVAE / MLVae with aggregate_argmax).");
  s.field("input_dim", &O::input_dim,
          "D = 2L, the size of φ = [μ ; log σ²] (set from the backbone).")
      .min(2)
      .derived(facts::backbone_embedding_dim);
  image_fields(s, "image", &O::image_channels, &O::image_height, &O::image_width);
  s.field("decoder", &O::decoder,
          "The CBIR paper's decoder: \"mnist_crb\" (Table 2, image sides divisible by 4) or "
          "\"modelnet40\" (Table 1, divisible by 16).",
          nn::vae_architecture_choices());
  s.field(
      "sharing", &O::sharing,
      "Which latent dimensions a pair shares: \"adaptive\" (AdaGVAE / Ada-ML-VAE: δ below "
      "½(min δ + max δ); nothing when max δ = min δ), \"fixed\" (GVAE as the CBIR paper uses "
      "it: the first `shared_dims` dimensions, the content space Z_C), \"none\" (a β-VAE on "
      "both images).",
      EnumChoices<Sharing>{
          {Sharing::Adaptive, "adaptive", "AdaGVAE / Ada-ML-VAE: the dimensions with δ below τ"},
          {Sharing::Fixed, "fixed", "GVAE as the CBIR paper: the first shared_dims dimensions"},
          {Sharing::None, "none", "nothing is shared: a β-VAE on both images"}});
  s.field("average", &O::average,
          "How shared posteriors are averaged: \"gvae\" (mean of means, log of the mean "
          "variance: disentanglement_lib), \"gvae_std\" (mean of standard deviations: the CBIR "
          "paper's text), \"mlvae\" (ML-VAE's precision-weighted product).",
          EnumChoices<Average>{
              {Average::Gvae, "gvae", "mean of means, log of the mean variance"},
              {Average::GvaeStd, "gvae_std", "mean of the standard deviations"},
              {Average::MlVae, "mlvae", "the precision-weighted product of the two Gaussians"}})
      .only_when("sharing = \"adaptive\" or \"fixed\"",
                 [](const O& o) { return o.sharing != Sharing::None; });
  s.field("shared_dims", &O::shared_dims,
          "With sharing = \"fixed\": how many leading latent dimensions form Z_C (the CBIR paper: "
          "7 of 10).")
      .min(0)
      .only_when("sharing = \"fixed\"", [](const O& o) { return o.sharing == Sharing::Fixed; });
  s.field("beta", &O::beta,
          "β, the weight of the KL term (disentanglement_lib requires it; the "
          "CBIR paper uses 1).")
      .min(0.0);
  s.check([](const O& o, FieldChecker& c) {
    const std::int64_t d = o.input_dim;
    if (d % 2 != 0)
      c.error("input_dim",
              fmt::format("must be even: φ = [μ ; log σ²] holds two L-vectors, got {}", d));
    if (o.sharing == Sharing::Fixed && o.shared_dims > d / 2)
      c.error("shared_dims", fmt::format("must be at most the latent size L = {}", d / 2));
    const std::int64_t factor = std::int64_t{1} << Decoder::halvings(o.decoder);
    const std::int64_t h = o.image_height, w = o.image_width;
    if (h % factor != 0 || w % factor != 0)
      c.error("decoder",
              fmt::format("the {} decoder needs image sides divisible by {}, the "
                          "dataset's images are {}×{}",
                          spelling_of(nn::vae_architecture_choices(), o.decoder), factor, h, w));
  });
  return s;
}

Contract VaeElbo::contract_of(const Options&) {
  Contract c;
  c.needs = {{Resource::GaussianPosterior}, {Resource::TrainingImages}};
  return c;
}

VaeElbo::VaeElbo(const Options& options) : options_(options), latent_(options.input_dim / 2) {
  decoder_ = register_module(
      "decoder", std::make_shared<Decoder>(
                     options.decoder, DecoderShape{latent_, options.image_channels,
                                                   options.image_height, options.image_width}));
}

torch::Tensor VaeElbo::shared_dimensions(const Posterior& first, const Posterior& second) const {
  torch::Tensor shared = torch::zeros(first.mean.sizes(), first.mean.options().dtype(torch::kBool));
  switch (options_.sharing) {
    case Sharing::Adaptive:
      return adaptive_shared(pair_divergence(first, second));
    case Sharing::Fixed:
      shared.narrow(1, 0, options_.shared_dims).fill_(true);
      return shared;
    case Sharing::None:
      return shared;
  }
  return shared;
}

std::map<std::string, torch::Tensor> VaeElbo::compute_impl(const LossInput& input) {
  const torch::Tensor& phi = input.items.by_row().phi;
  const torch::Tensor& images = *input.images;  // declared need: Loss::compute checked it
  const Comparisons& triplets = input.comparisons;
  const ComparedItems in = gather(input.items, triplets);
  const Posterior first = split_posterior(in.first.phi), second = split_posterior(in.second.phi);
  const torch::Tensor shared = shared_dimensions(first, second);
  const Posterior average = average_posterior(first, second, options_.average);
  torch::Tensor reconstruction = torch::zeros({}, phi.options()),
                kl = torch::zeros({}, phi.options());
  const std::array<std::pair<Posterior, torch::Tensor>, 2> pair = {
      {{first, images.index_select(0, triplets.first)},
       {second, images.index_select(0, triplets.second)}}};
  for (const auto& [own, target] : pair) {
    const Posterior q = aggregate(own, average, shared);
    const torch::Tensor z = q.mean + (0.5 * q.log_var).exp() * torch::randn_like(q.mean);
    namespace F = torch::nn::functional;
    const torch::Tensor per_pixel = F::binary_cross_entropy_with_logits(
        decoder_->forward(z), target,
        F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
    reconstruction = reconstruction + 0.5 * per_pixel.flatten(1).sum(1).mean();
    kl = kl + 0.5 * prior_kl(q).mean();
  }
  return {{"reconstruction", reconstruction}, {"kl", options_.beta * kl}};
}

}  // namespace wscsl::vae_elbo

WSCSL_PLUGIN(vae_elbo, "0.1.0",
             "Weakly supervised VAE ELBO: GVAE, ML-VAE and AdaGVAE (disentanglement_lib)") {
  registrar.add<wscsl::Loss, wscsl::vae_elbo::VaeElbo>("vae_elbo");
}
