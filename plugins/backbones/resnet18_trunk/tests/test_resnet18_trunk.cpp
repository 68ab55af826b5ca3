#include <gtest/gtest.h>

#include <filesystem>

#include "../src/resnet18_trunk.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

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

namespace {

namespace fs = std::filesystem;

std::shared_ptr<Backbone> trunk_with(const std::string& toml_body) {
  return wscsl::testing::build<Backbone>("resnet18_trunk", toml_body,
                                         wscsl::testing::with_images({}, 3, 112, 112));
}

std::string weights_option(const fs::path& file) {
  return "weights = \"" + file.string() + "\"";
}

std::string build_error(const std::string& toml_body) {
  try {
    trunk_with(toml_body);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

const torch::nn::Module& module_of(const Backbone& b) {
  return dynamic_cast<const torch::nn::Module&>(b);
}

}  // namespace

TEST(Resnet18Trunk, LoadsTorchvisionWeightsAndIgnoresLayer4AndFc) {
  wscsl::testing::ScratchDir dir("resnet18_weights");
  const fs::path file = dir.path() / "resnet18.pt";
  wscsl::testing::write_resnet18_weights(file);
  const nn::StateDict weights = nn::read_state_dict(file);
  auto b = trunk_with(weights_option(file));
  std::size_t compared = 0;
  for (const auto& [name, tensor] : weights) {
    if (name.rfind("layer4.", 0) == 0 || name.rfind("fc.", 0) == 0) continue;
    const auto& m = module_of(*b);
    const torch::Tensor* own = m.named_parameters().find(name);
    if (!own) own = m.named_buffers().find(name);
    ASSERT_NE(own, nullptr) << name;
    EXPECT_TRUE(torch::equal(*own, tensor)) << name;
    ++compared;
  }
  EXPECT_EQ(compared, weights.size() - 3);
  // fc_embed is not in a torchvision file: it keeps nn.Linear's initialisation.
  EXPECT_GT(wscsl::testing::parameter(module_of(*b), "fc_embed.weight").abs().sum().item<double>(),
            0.0);
}

TEST(Resnet18Trunk, AWeightsFileThatDoesNotFitNamesEveryProblem) {
  wscsl::testing::ScratchDir dir("resnet18_weights");
  const fs::path file = dir.path() / "resnet18.pt";
  wscsl::testing::write_resnet18_weights(file);
  nn::StateDict weights = nn::read_state_dict(file);
  nn::StateDict broken;
  for (auto& [name, tensor] : weights) {
    if (name == "layer2.0.bn1.running_var") continue;
    broken.emplace_back(name, name == "conv1.weight" ? torch::zeros({64, 1, 7, 7}) : tensor);
  }
  broken.emplace_back("layer3.1.se.weight", torch::zeros({16}));
  const fs::path bad = dir.path() / "bad.pt";
  nn::write_state_dict(bad, broken);
  const std::string message = build_error(weights_option(bad));
  EXPECT_NE(message.find(bad.string() + ": the weights do not fit this trunk (3 problems)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("missing entry 'layer2.0.bn1.running_var'"), std::string::npos) << message;
  EXPECT_NE(message.find("unexpected entry 'layer3.1.se.weight'"), std::string::npos) << message;
  EXPECT_NE(message.find("'conv1.weight' is [64, 1, 7, 7] in the file and [64, 3, 7, 7] here"),
            std::string::npos)
      << message;

  const fs::path gray = dir.path() / "gray.pt";  // weights for 1-channel images, 3-channel data
  wscsl::testing::write_resnet18_weights(gray, 1);
  EXPECT_NE(build_error(weights_option(gray)).find("(1 problem)"), std::string::npos);
}

TEST(Resnet18Trunk, ATruncatedWeightsFileIsOneSentence) {
  wscsl::testing::ScratchDir dir("resnet18_weights");
  const fs::path file = dir.path() / "resnet18.pt";
  wscsl::testing::write_resnet18_weights(file);
  fs::resize_file(file, fs::file_size(file) / 3);
  const std::string message = build_error(weights_option(file));
  EXPECT_NE(message.find(file.string() + ": truncated or damaged"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(Resnet18Trunk, FrozenBatchNormStatisticsStayWhileTraining) {
  auto b = trunk_with("freeze_bn = \"statistics\"");
  auto& m = dynamic_cast<torch::nn::Module&>(*b);
  m.train();
  const torch::Tensor mean = wscsl::testing::parameter(m, "conv1.weight").new_zeros({64});
  b->embed(torch::rand({2, 3, 112, 112}));
  for (const auto& sub : m.named_modules()) {
    const bool batch_norm = sub.value()->as<wscsl::nn::BatchNorm2d>() != nullptr;
    EXPECT_EQ(sub.value()->is_training(), !batch_norm) << sub.key();
  }
  EXPECT_TRUE(torch::equal(*m.named_buffers().find("bn1.running_mean"), mean));
  EXPECT_TRUE(wscsl::testing::parameter(m, "bn1.weight").requires_grad());

  auto trained = trunk_with("");
  auto& t = dynamic_cast<torch::nn::Module&>(*trained);
  t.train();
  trained->embed(torch::rand({2, 3, 112, 112}));
  EXPECT_FALSE(torch::equal(*t.named_buffers().find("bn1.running_mean"), mean));
}

TEST(Resnet18Trunk, FreezingAllOfBatchNormAlsoFixesGammaAndBeta) {
  auto b = trunk_with("freeze_bn = \"all\"");
  const auto& m = module_of(*b);
  for (const auto& p : m.named_parameters()) {
    const bool batch_norm = p.key().find("bn") != std::string::npos ||
                            p.key().find("downsample.1") != std::string::npos;
    EXPECT_EQ(p.value().requires_grad(), !batch_norm) << p.key();
  }
}

TEST(Resnet18Trunk, ProvidesLayer3sMapThatPhiIsPooledFrom) {
  auto b = trunk_with("embedding_dim = 8");
  b->eval();
  EXPECT_TRUE(b->contract().provides_resource(Resource::FeatureMap, ""));
  EXPECT_EQ(b->feature_map_channels(), 256);
  const torch::Tensor images = torch::rand({2, 3, 112, 112});
  const BackboneOutput out = b->embed_with_map(images);
  EXPECT_EQ(out.feature_map.sizes(), (std::vector<std::int64_t>{2, 256, 7, 7}));
  EXPECT_TRUE(out.phi.equal(b->embed(images)));
  EXPECT_TRUE(out.feature_map.mean({2, 3}).allclose(
      dynamic_cast<resnet18_trunk::Resnet18Trunk&>(*b).features(images), 1e-5, 1e-6));
}
