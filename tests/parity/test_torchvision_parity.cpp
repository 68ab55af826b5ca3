// wscsl against the libraries researchers use, on what make_torchvision_reference.py wrote with
// Debian's python3-torch, python3-torchvision and python3-pil (WSCSL_PARITY_DIR): the ResNet-18
// trunk loaded from torchvision's state dicts gives torchvision's features and φ, the ResNet-50
// trunk torchvision's maps after layer3 and layer4, and real JPEG and PNG files decode, resize and
// crop to PIL + torchvision's bytes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "resnet18_trunk.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/testing/harness.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

fs::path reference_dir() {
  const char* dir = std::getenv("WSCSL_PARITY_DIR");
  if (!dir) throw std::runtime_error("WSCSL_PARITY_DIR is not set (ctest sets it)");
  return dir;
}

torch::Tensor entry(const nn::StateDict& dict, const std::string& name) {
  for (const auto& [key, tensor] : dict)
    if (key == name) return tensor;
  throw std::runtime_error("the reference has no '" + name + "'");
}

std::shared_ptr<resnet18_trunk::Resnet18Trunk> trunk_from(const fs::path& weights) {
  resnet18_trunk::Resnet18TrunkOptions options;
  options.input_channels = 3;
  options.input_height = options.input_width = 112;
  options.weights = weights.string();
  auto trunk = std::make_shared<resnet18_trunk::Resnet18Trunk>(options);
  trunk->eval();
  return trunk;
}

double max_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// How far two float32 evaluations of the trunk may differ when only their kernels differ (Python
// ran on this CPU's own; ctest runs this test again under others): an output is accumulated
// along a path of n multiply-adds, conv1 (7·7·3) + layer1 (4 × 3·3·64) + layer2 (3·3·64 + 3 ×
// 3·3·128) + layer3 (3·3·128 + 3 × 3·3·256) + the 7×7 average pool + fc_embed (256) = 14,852,
// and two orders of a sum of n terms differ by at most n·u·Σ|terms| (u = 2^-24), scaled here by
// the largest output (see test_distributed.cpp for why). 8.9e-4 of the scale: a wrong layer,
// padding, stride or epsilon moves outputs by far more.
double kernel_tolerance(const torch::Tensor& reference) {
  constexpr double n = 14852, u = 5.9604644775390625e-8;
  return n * u * reference.abs().max().item<double>();
}

}  // namespace

TEST(TorchvisionParity, TrunkGivesTorchvisionsFeaturesAndPhi) {
  const fs::path dir = reference_dir();
  const nn::StateDict reference = nn::read_state_dict(dir / "trunk_reference.pt");
  const torch::Tensor images = entry(reference, "images");
  torch::NoGradGuard no_grad;

  const torch::Tensor features = entry(reference, "features");
  const torch::Tensor phi = entry(reference, "phi");
  const auto whole = trunk_from(dir / "resnet18.pt");  // torchvision's keys + fc_embed
  EXPECT_LE(max_difference(whole->features(images), features), kernel_tolerance(features));
  EXPECT_LE(max_difference(whole->embed(images), phi), kernel_tolerance(phi));

  // torchvision's own files, through scripts/convert-weights.py: the same trunk up to fc_embed.
  for (const char* converted : {"resnet18_converted.pt", "resnet18_legacy_converted.pt"})
    EXPECT_LE(max_difference(trunk_from(dir / converted)->features(images), features),
              kernel_tolerance(features))
        << converted;
}

// The same bound for the ResNet-50 trunk on 64-px images: the longest path is conv1 (7·7·3), then
// per bottleneck its 1×1, 3×3 and 1×1 convolutions, (in + 9·planes + planes) multiply-adds — 2,496
// over layer1, 6,912 over layer2, 20,992 over layer3 and 20,480 over layer4 — so 30,547 to layer3
// and 51,027 to layer4.
double resnet50_tolerance(const torch::Tensor& reference, double path) {
  constexpr double u = 5.9604644775390625e-8;
  return path * u * reference.abs().max().item<double>();
}

TEST(TorchvisionParity, Resnet50TrunkGivesTorchvisionsMapsAfterLayer3AndLayer4) {
  const fs::path dir = reference_dir();
  const nn::StateDict reference = nn::read_state_dict(dir / "resnet50_reference.pt");
  const torch::Tensor images = entry(reference, "images");
  torch::NoGradGuard no_grad;
  for (const auto& [last_layer, name, path] :
       {std::tuple{3, "layer3", 30547.0}, std::tuple{4, "layer4", 51027.0}}) {
    const auto trunk =
        wscsl::testing::build<Backbone>("resnet50_trunk",
                                        fmt::format("last_layer = {}\nweights = \"{}\"", last_layer,
                                                    (dir / "resnet50.pt").string()),
                                        wscsl::testing::with_images({}, 3, 64, 64));
    trunk->eval();
    const torch::Tensor expected = entry(reference, name);
    EXPECT_LE(max_difference(trunk->embed_with_map(images).feature_map, expected),
              resnet50_tolerance(expected, path))
        << name;
  }
}

TEST(TorchvisionParity, UnconvertedTorchvisionFilesAreRefusedWithTheWayOut) {
  const fs::path dir = reference_dir();
  for (const char* file : {"resnet18_ordered.pt", "resnet18_legacy.pt"}) {
    try {
      trunk_from(dir / file);
      ADD_FAILURE() << file << " was accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("scripts/convert-weights.py"), std::string::npos)
          << e.what();
    }
  }
}

TEST(TorchvisionParity, ImagesDecodeResizeAndCropAsPilAndTorchvision) {
  const fs::path dir = reference_dir();
  const nn::StateDict reference = nn::read_state_dict(dir / "images_reference.pt");
  ASSERT_GE(reference.size(), 6u);
  for (const auto& [name, expected] : reference) {
    const DecodedImage decoded = read_image_file(dir / "images" / name, kDefaultMaxImagePixels);
    ASSERT_TRUE(decoded.problem.empty()) << name << ": " << decoded.problem;
    torch::Tensor ours = torch::empty({3, 112, 112}, torch::kUInt8);
    resize_and_center_crop(decoded.image, 112, ours.data_ptr<std::uint8_t>());
    const torch::Tensor differ = ours.ne(expected);
    EXPECT_EQ(differ.sum().item<std::int64_t>(), 0)
        << name << ": " << differ.sum().item<std::int64_t>() << " of 37632 values differ, by up to "
        << max_difference(ours.to(torch::kInt), expected.to(torch::kInt));
  }
}
