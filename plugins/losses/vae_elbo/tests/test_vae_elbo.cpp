#include <cmath>

#include <gtest/gtest.h>

#include "../src/vae_elbo.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using namespace wscsl::vae_elbo;

namespace {

Posterior posterior(std::vector<float> mean, std::vector<float> var) {
  return {torch::tensor(mean).unsqueeze(0), torch::tensor(var).log().unsqueeze(0)};
}

Facts image_facts(std::int64_t latent) {
  return wscsl::testing::with_images(wscsl::testing::facts(3, 2 * latent), 1, 8, 8);
}

}  // namespace

TEST(VaeElbo, PairDivergenceIsTwiceTheKl) {
  // μ₁ = 0, σ²₁ = 1; μ₂ = 1, σ²₂ = 2: ½ + ½ − 1 + log 2 − 0.
  const torch::Tensor d = pair_divergence(posterior({0.0f}, {1.0f}), posterior({1.0f}, {2.0f}));
  EXPECT_NEAR(d.item<double>(), std::log(2.0), 1e-6);
}

TEST(VaeElbo, AdaptiveThresholdIsHalfwayBetweenMinAndMax) {
  // min 0, max 4 → τ = 2: δ < 2 shared; δ = 2 falls in the upper bin, as in the reference.
  const torch::Tensor shared = adaptive_shared(torch::tensor({{0.0f, 1.0f, 4.0f, 3.0f, 2.0f}}));
  EXPECT_TRUE(torch::equal(shared, torch::tensor({{true, true, false, false, false}})));
  // Naive loop on random rows.
  const torch::Tensor delta = torch::rand({5, 7});
  const torch::Tensor fast = adaptive_shared(delta);
  for (int i = 0; i < 5; ++i) {
    const double lo = delta[i].min().item<double>(), hi = delta[i].max().item<double>();
    for (int j = 0; j < 7; ++j)
      EXPECT_EQ(fast[i][j].item<bool>(), delta[i][j].item<double>() < 0.5 * (lo + hi));
  }
}

TEST(VaeElbo, NothingIsSharedWhenAllDivergencesAreEqual) {
  const torch::Tensor shared = adaptive_shared(torch::full({2, 4}, 0.3f));
  EXPECT_FALSE(shared.any().item<bool>());
}

TEST(VaeElbo, GvaeAndMlvaeAveraging) {
  const Posterior a = posterior({1.0f}, {1.0f}), b = posterior({3.0f}, {3.0f});
  const Posterior gvae = average_posterior(a, b, Average::Gvae);
  EXPECT_NEAR(gvae.mean.item<double>(), 2.0, 1e-6);
  EXPECT_NEAR(gvae.log_var.exp().item<double>(), 2.0, 1e-6);
  // ML-VAE: σ̄² = 2·1·3/(1+3) = 1.5, μ̄ = ½(1/1 + 3/3)·1.5 = 1.5.
  const Posterior mlvae = average_posterior(a, b, Average::MlVae);
  EXPECT_NEAR(mlvae.mean.item<double>(), 1.5, 1e-6);
  EXPECT_NEAR(mlvae.log_var.exp().item<double>(), 1.5, 1e-6);
  // The paper's text: mean of standard deviations, ½(1 + √3), squared.
  const Posterior by_std = average_posterior(a, b, Average::GvaeStd);
  EXPECT_NEAR(by_std.log_var.exp().item<double>(), std::pow(0.5 * (1 + std::sqrt(3.0)), 2), 1e-5);
}

TEST(VaeElbo, AggregateReplacesOnlySharedDimensions) {
  const Posterior own = posterior({1.0f, 2.0f}, {1.0f, 1.0f});
  const Posterior avg = posterior({5.0f, 6.0f}, {2.0f, 2.0f});
  const Posterior q = aggregate(own, avg, torch::tensor({{true, false}}));
  EXPECT_TRUE(torch::allclose(q.mean, torch::tensor({{5.0f, 2.0f}})));
  EXPECT_NEAR(prior_kl(posterior({1.0f}, {1.0f})).item<double>(), 0.5, 1e-6);
}

TEST(VaeElbo, FixedSharingUsesTheLeadingDimensions) {
  auto loss = std::static_pointer_cast<VaeElbo>(wscsl::testing::build<Loss>(
      "vae_elbo", "sharing = \"fixed\"\nshared_dims = 2", image_facts(3)));
  const Posterior p = posterior({0.0f, 0.0f, 0.0f}, {1.0f, 1.0f, 1.0f});
  EXPECT_TRUE(torch::equal(loss->shared_dimensions(p, p), torch::tensor({{true, true, false}})));
}

TEST(VaeElbo, ComputesAFiniteElboWithGradientsIntoTheDecoder) {
  auto loss = wscsl::testing::build<Loss>("vae_elbo", "beta = 2.0", image_facts(4));
  const torch::Tensor phi_anchor = torch::randn({3, 8}, torch::requires_grad());
  ItemFeatures items;
  items.phi = torch::cat({phi_anchor, torch::randn({3, 8}), torch::randn({3, 8})});
  const Comparisons triplets = Comparisons::triplets_by_role(3, torch::kCPU);
  const torch::Tensor images = torch::rand({9, 1, 8, 8});  // of the anchors, close, far items
  const ComparisonScores s;
  const auto terms = loss->compute({items, triplets, s, nullptr, &images});
  ASSERT_EQ(terms.size(), 2u);
  const torch::Tensor total = terms.at("reconstruction") + terms.at("kl");
  EXPECT_GT(terms.at("kl").item<double>(), 0.0);
  total.backward();
  EXPECT_TRUE(phi_anchor.grad().defined());
  ASSERT_FALSE(loss->parameters().empty());
  EXPECT_TRUE(loss->parameters()[0].grad().defined());
}

TEST(VaeElbo, DeclaresItsNeedsAndIsRefusedAnInputWithoutImages) {
  auto loss = wscsl::testing::build<Loss>("vae_elbo", "", image_facts(2));
  EXPECT_TRUE(loss->contract().needs_resource(Resource::TrainingImages));
  EXPECT_TRUE(loss->contract().needs_resource(Resource::GaussianPosterior));
  ItemFeatures items;
  items.phi = torch::zeros({3, 4});
  const Comparisons triplets = Comparisons::triplets_by_role(1, torch::kCPU);
  const ComparisonScores s;
  try {
    loss->compute({items, triplets, s});
    FAIL() << "expected the missing images to be refused";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the triplets' images, and its input has none"),
              std::string::npos)
        << e.what();
  }
}

TEST(VaeElbo, RejectsImageSidesTheDecoderCannotProduce) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Loss, "vae_elbo", "decoder = \"modelnet40\"",
      wscsl::testing::with_images(wscsl::testing::facts(3, 8), 1, 8, 8));
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.format().find("divisible by 16"), std::string::npos);
}
