// The ResNet-50 trunk through the loader: torchvision's layout and parameter counts, its feature
// map and φ. tests/parity compares it with torchvision's own network, weights loaded.
#include <gtest/gtest.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace resnet50_tests {

std::shared_ptr<Backbone> trunk(const std::string& body, std::int64_t side = 32) {
  return wscsl::testing::build<Backbone>("resnet50_trunk", body,
                                         wscsl::testing::with_images({}, 3, side, side));
}

std::int64_t parameter_count(const Backbone& b) {
  std::int64_t n = 0;
  for (const torch::Tensor& p : b.parameters())
    n += p.numel();
  return n;
}

TEST(Resnet50Trunk, HasTorchvisionsParametersUpToItsLastLayer) {
  // Counted with python3-torchvision 0.14: conv1, bn1 and layer1-3 of resnet50() hold 8,543,296
  // parameters (258 state-dict entries); with layer4, 23,508,032 (318 entries, fc left out).
  const auto released = trunk("");
  EXPECT_EQ(parameter_count(*released), 8543296);
  EXPECT_EQ(released->named_parameters().size() + released->named_buffers().size(), 258u);
  const auto whole = trunk("last_layer = 4");
  EXPECT_EQ(parameter_count(*whole), 23508032);
  EXPECT_EQ(whole->named_parameters().size() + whole->named_buffers().size(), 318u);
  const auto params = whole->named_parameters();
  // The first block of a stage changes the shape: torchvision's 1×1 downsample, and the 3×3 stride
  // on conv2 ("v1.5").
  EXPECT_EQ(params["layer1.0.downsample.0.weight"].sizes(),
            (std::vector<std::int64_t>{256, 64, 1, 1}));
  EXPECT_EQ(params["layer4.0.conv2.weight"].sizes(), (std::vector<std::int64_t>{512, 512, 3, 3}));
  EXPECT_EQ(params["layer4.2.conv3.weight"].sizes(), (std::vector<std::int64_t>{2048, 512, 1, 1}));
  EXPECT_TRUE(whole->named_buffers().contains("layer3.5.bn3.running_var"));
}

TEST(Resnet50Trunk, ProvidesItsLastLayersMapAndPhiIsItsAverage) {
  const auto b = trunk("");
  b->eval();
  EXPECT_TRUE(b->contract().provides_resource(Resource::FeatureMap, ""));
  EXPECT_EQ(b->embedding_dim(), 1024);
  EXPECT_EQ(b->feature_map_channels(), 1024);
  // 32 px halve four times (conv1, max-pool, layer2, layer3) to 2 × 2.
  const torch::Tensor images = torch::rand({2, 3, 32, 32});
  const BackboneOutput out = b->embed_with_map(images);
  EXPECT_EQ(out.feature_map.sizes(), (std::vector<std::int64_t>{2, 1024, 2, 2}));
  EXPECT_TRUE(out.phi.equal(out.feature_map.mean({2, 3})));
  EXPECT_TRUE(out.phi.equal(b->embed(images)));

  const auto whole = trunk("last_layer = 4", 64);
  EXPECT_EQ(whole->feature_map_channels(), 2048);
  EXPECT_EQ(whole->embed_with_map(torch::rand({1, 3, 64, 64})).feature_map.sizes(),
            (std::vector<std::int64_t>{1, 2048, 2, 2}));
}

TEST(Resnet50Trunk, RefusesALastLayerItDoesNotHave) {
  const Diagnostics d =
      wscsl::testing::bind_diagnostics(Kind::Backbone, "resnet50_trunk", "last_layer = 5",
                                       wscsl::testing::with_images({}, 3, 32, 32));
  EXPECT_EQ(d.error_count(), 1u) << d.format();
}

}  // namespace resnet50_tests
