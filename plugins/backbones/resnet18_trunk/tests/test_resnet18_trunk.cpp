#include <gtest/gtest.h>

#include "../src/resnet18_trunk.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;

TEST(Resnet18Trunk, OutputSideOfTheTrunk) {
  EXPECT_EQ(resnet18_trunk::trunk_output_side(112), 7);
  EXPECT_EQ(resnet18_trunk::trunk_output_side(97), 7);
  EXPECT_EQ(resnet18_trunk::trunk_output_side(96), 6);
}

TEST(Resnet18Trunk, EmbedsA112PixelBatch) {
  auto b = wscsl::testing::build<Backbone>("resnet18_trunk", "embedding_dim = 16",
                                           wscsl::testing::with_images({}, 3, 112, 112));
  EXPECT_EQ(b->embedding_dim(), 16);
  const torch::Tensor phi = b->embed(torch::rand({2, 3, 112, 112}));
  EXPECT_EQ(phi.sizes(), (std::vector<std::int64_t>{2, 16}));
  EXPECT_TRUE(phi.isfinite().all().item<bool>());
}

TEST(Resnet18Trunk, RejectsImagesThatDoNotGiveTheSevenPixelMap) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Backbone, "resnet18_trunk", "", wscsl::testing::with_images({}, 3, 32, 32));
  EXPECT_EQ(d.error_count(), 2u);
  EXPECT_NE(d.format().find("112-px"), std::string::npos);
}
