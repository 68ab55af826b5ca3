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
