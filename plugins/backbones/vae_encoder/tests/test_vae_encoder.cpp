#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(VaeEncoder, GivesMeanAndLogVarianceForEachArchitecture) {
  for (const char* architecture : {"mnist_crb", "modelnet40"}) {
    auto b = wscsl::testing::build<Backbone>(
        "vae_encoder", std::string("latent_dim = 5\narchitecture = \"") + architecture + "\"",
        wscsl::testing::with_images({}, 3, 32, 32));
    EXPECT_EQ(b->embedding_dim(), 10);
    const torch::Tensor phi = b->embed(torch::rand({2, 3, 32, 32}));
    EXPECT_EQ(phi.sizes(), (std::vector<std::int64_t>{2, 10})) << architecture;
    EXPECT_TRUE(phi.isfinite().all().item<bool>());
  }
}

TEST(VaeEncoder, ProvidesAGaussianPosterior) {
  auto b = wscsl::testing::build<Backbone>("vae_encoder", "",
                                           wscsl::testing::with_images({}, 1, 28, 28));
  EXPECT_TRUE(b->contract().provides_resource(Resource::GaussianPosterior, ""));
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Backbone, "vae_encoder", "architecture = \"mnist_cbr\"",
      wscsl::testing::with_images({}, 1, 28, 28));
  EXPECT_NE(d.format().find("did you mean 'mnist_crb'?"), std::string::npos) << d.format();
}
