#include <gtest/gtest.h>

#include <cmath>

#include <torch/nn/modules/conv.h>

#include "wscsl/testing/harness.hpp"

using namespace wscsl;

namespace {

// The dataset facts a pipeline establishes: channels, height, width.
Facts images(std::int64_t channels, std::int64_t height, std::int64_t width) {
  return wscsl::testing::with_images({}, channels, height, width);
}

}  // namespace

TEST(ConvNet, MapsImagesToTheEmbeddingSize) {
  auto net = wscsl::testing::build<Backbone>(
      "convnet", "width = 8\ndepth = 3\nembedding_dim = 16\n", images(3, 32, 32));
  const torch::Tensor out = net->embed(torch::rand({5, 3, 32, 32}));
  EXPECT_EQ(out.sizes(), (std::vector<std::int64_t>{5, 16}));
  EXPECT_EQ(net->embedding_dim(), 16);
  // depth stages × (conv + batch norm) + the head: 3·(1 + 2) + 2 parameter tensors.
  EXPECT_EQ(net->parameters().size(), 11u);
  out.sum().backward();
  for (const auto& p : net->parameters())
    EXPECT_TRUE(p.grad().defined());
}

TEST(ConvNet, StridedStagesHalveTheResolutionWithoutPooling) {
  auto net = wscsl::testing::build<Backbone>(
      "convnet", "width = 4\ndepth = 2\nconvs_per_stage = 2\ndownsample = \"stride\"\n",
      images(3, 32, 32));
  EXPECT_EQ(net->embed(torch::rand({3, 3, 32, 32})).sizes(), (std::vector<std::int64_t>{3, 64}));
  // 2 stages × 2 (conv + batch norm) + head; no pooling layer in between.
  EXPECT_EQ(net->parameters().size(), 2u * 2u * 3u + 2u);
  std::int64_t strided = 0;
  for (const auto& m : net->modules(false))
    if (auto conv = std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(m))
      strided += conv->options.stride()->at(0) == 2;
  EXPECT_EQ(strided, 2);
}

TEST(ConvNet, WithoutNormalisationEachImageIsEmbeddedAlone) {
  auto net = wscsl::testing::build<Backbone>(
      "convnet", "width = 4\ndepth = 2\nnormalization = \"none\"\n", images(3, 16, 16));
  // depth stages × conv (weight and bias) + the head; no batch-norm layer at all.
  EXPECT_EQ(net->parameters().size(), 2u * 2u + 2u);
  EXPECT_TRUE(net->buffers().empty());
  // In training mode too, an image's embedding does not depend on the rest of its batch.
  net->train();
  const torch::Tensor batch = torch::rand({4, 3, 16, 16});
  const torch::Tensor whole = net->embed(batch);
  const torch::Tensor halves =
      torch::cat({net->embed(batch.narrow(0, 0, 2)), net->embed(batch.narrow(0, 2, 2))});
  EXPECT_TRUE(torch::allclose(whole, halves, 1e-6, 1e-6));
}

TEST(ConvNet, FlattenHeadSeesTheWholeFeatureMap) {
  const Facts facts = images(3, 28, 20);
  // 28×20 → strided stages 14×10 → 7×5: the head reads 8 · 35 features.
  auto net = wscsl::testing::build<Backbone>(
      "convnet", "width = 4\ndepth = 2\ndownsample = \"stride\"\npooling = \"flatten\"\n", facts);
  EXPECT_EQ(net->embed(torch::rand({2, 3, 28, 20})).size(1), 64);
  for (const auto& item : net->named_parameters()) {
    if (item.key() == "head.weight") {
      EXPECT_EQ(item.value().sizes(), (std::vector<std::int64_t>{64, 8 * 7 * 5}));
    }
  }
  // Max-pooling a 2×2 image twice leaves nothing to flatten.
  const Facts tiny = images(3, 2, 2);
  EXPECT_THROW(
      wscsl::testing::build<Backbone>("convnet", "depth = 3\npooling = \"flatten\"\n", tiny),
      Error);
}

TEST(ConvNet, TakesItsInputChannelsFromTheDataset) {
  const Facts facts = images(1, 32, 32);
  auto net = wscsl::testing::build<Backbone>("convnet", "width = 4\n", facts);
  EXPECT_EQ(net->embed(torch::rand({2, 1, 32, 32})).size(1), 64);
  const Diagnostics d =
      wscsl::testing::bind_diagnostics(Kind::Backbone, "convnet", "input_channels = 3\n", facts);
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.format().find("disagrees with dataset.channels = 1"), std::string::npos);
}

TEST(ConvNet, HandComputedSingleConvolution) {
  // One stage, one 3×3 convolution with every weight w on a constant 1-channel 4×4 image c:
  // zero padding gives 4 corner outputs of 4wc, 8 edge outputs of 6wc and 4 inner outputs of 9wc,
  // whose mean is 6.25wc. Batch norm in eval mode with fresh statistics divides by √(1 + 1e-5).
  const Facts facts = images(1, 32, 32);
  auto net = wscsl::testing::build<Backbone>("convnet", "width = 1\ndepth = 1\nembedding_dim = 1\n",
                                             facts);
  net->eval();
  const double w = 0.5, c = 0.8, v = 2.0, b = -0.25;
  torch::NoGradGuard no_grad;
  for (auto& item : net->named_parameters()) {
    const std::string& name = item.key();
    if (name == "features.0.weight") item.value().fill_(w);
    if (name == "head.weight") item.value().fill_(v);
    if (name == "head.bias") item.value().fill_(b);
  }
  const double expected = v * (6.25 * w * c / std::sqrt(1.0 + 1e-5)) + b;
  EXPECT_NEAR(net->embed(torch::full({1, 1, 4, 4}, c)).item<double>(), expected, 1e-6);
}

TEST(ConvNet, RefusesAnUnknownDownsamplingWithTheNearestChoice) {
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Backbone, "convnet", "downsample = \"strided\"\n", images(3, 32, 32));
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.format().find("'downsample' has no choice \"strided\""), std::string::npos);
  EXPECT_NE(d.format().find("did you mean 'stride'?"), std::string::npos) << d.format();
}

TEST(ConvNet, IsNotBuiltWithoutTheDatasetFacts) {
  EXPECT_THROW(wscsl::testing::build<Backbone>("convnet", "width = 4\n"), Error);
}

TEST(ConvNet, ProvidesTheLastStagesMapThatPhiIsPooledFrom) {
  auto net = wscsl::testing::build<Backbone>("convnet", "width = 4\ndepth = 3\nembedding_dim = 8\n",
                                             images(3, 32, 32));
  net->eval();
  EXPECT_TRUE(net->contract().provides_resource(Resource::FeatureMap, ""));
  // Three stages of 4, 8, 16 channels, 2×2 max-pooling between them: 32 → 8 pixels.
  EXPECT_EQ(net->feature_map_channels(), 16);
  const torch::Tensor images = torch::rand({2, 3, 32, 32});
  const BackboneOutput out = net->embed_with_map(images);
  EXPECT_EQ(out.feature_map.sizes(), (std::vector<std::int64_t>{2, 16, 8, 8}));
  EXPECT_TRUE(out.phi.equal(net->embed(images)));
  // φ is the head of the map's average over its positions.
  const auto params = net->named_parameters();
  const torch::Tensor head =
      torch::addmm(params["head.bias"], out.feature_map.mean({2, 3}), params["head.weight"].t());
  EXPECT_TRUE(out.phi.allclose(head, 1e-5, 1e-6));
}
