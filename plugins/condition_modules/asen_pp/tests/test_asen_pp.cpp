// ASEN++: the crop box against a hand-written loop, the composition global attention → crop →
// local trunk → local attention → √β·g ⊕ √(1−β)·l against its pieces applied one image and one
// attribute at a time, gradients against finite differences in double, the joint stage's terms,
// the first stage's weights, and the inputs and options it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include <torch/nn/functional/upsampling.h>

#include "../src/asen_pp.hpp"
#include "../src/attention_crop.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::asen_pp::AsenPp;
using wscsl::asen_pp::CropBox;
using wscsl::testing::parameter;
namespace F = torch::nn::functional;

namespace {

constexpr std::int64_t kConditions = 2, kChannels = 4, kImage = 16, kEmbedding = 5;

asen_pp::AsenPpOptions small_options(asen_pp::Stage stage) {
  asen_pp::AsenPpOptions o;
  o.stage = stage;
  o.num_conditions = kConditions;
  o.feature_map_channels = kChannels;
  o.input_channels = 3;
  o.attribute_dim = 3, o.common_dim = 2, o.reduction = 2, o.embedding_dim = kEmbedding;
  o.local_trunk = asen_pp::LocalTrunk::Resnet18;
  o.local_common_dim = 3, o.local_reduction = 4, o.local_size = 16;
  o.threshold = 0.3;
  o.beta = 0.6;
  return o;
}

// Built directly (as the loader builds it, contract included), so that the test reaches its parts.
std::shared_ptr<AsenPp> make(asen_pp::Stage stage) {
  auto m = std::make_shared<AsenPp>(small_options(stage));
  m->set_contract(AsenPp::contract_of(small_options(stage)));
  m->to(torch::kDouble);
  return m;
}

// The released box, by loops: bilinear resize with pixel centres and clamped borders, min-max,
// uint8(255·n) against 255·threshold, the bounding rectangle, the square placed inside the image.
CropBox naive_box(const torch::Tensor& alpha, std::int64_t height, std::int64_t width,
                  double threshold) {
  const std::int64_t h = alpha.size(0), w = alpha.size(1);
  const auto at = [&](std::int64_t i, std::int64_t j) { return alpha[i][j].item<double>(); };
  std::vector<double> up(static_cast<std::size_t>(height * width));
  for (std::int64_t r = 0; r < height; ++r)
    for (std::int64_t c = 0; c < width; ++c) {
      const double sy = std::max(0.0, (r + 0.5) * h / height - 0.5);
      const double sx = std::max(0.0, (c + 0.5) * w / width - 0.5);
      const std::int64_t y0 = std::min<std::int64_t>(static_cast<std::int64_t>(sy), h - 1);
      const std::int64_t x0 = std::min<std::int64_t>(static_cast<std::int64_t>(sx), w - 1);
      const std::int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
      const double fy = sy - y0, fx = sx - x0;
      up[static_cast<std::size_t>(r * width + c)] =
          (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
          fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
    }
  const double low = *std::min_element(up.begin(), up.end());
  const double high = *std::max_element(up.begin(), up.end());
  std::int64_t top = height, bottom = -1, left = width, right = -1;
  for (std::int64_t r = 0; r < height; ++r)
    for (std::int64_t c = 0; c < width; ++c) {
      const double v = up[static_cast<std::size_t>(r * width + c)];
      const bool kept =
          high > low ? std::floor((v - low) / (high - low) * 255) > 255 * threshold : true;
      if (!kept) continue;
      top = std::min(top, r), bottom = std::max(bottom, r);
      left = std::min(left, c), right = std::max(right, c);
    }
  const std::int64_t bw = right - left + 1, bh = bottom - top + 1;
  const std::int64_t side = std::min(std::max(bw, bh), std::min(height, width));
  const std::int64_t xc = left + bw / 2, yc = top + bh / 2;
  CropBox box;
  box.size = side;
  box.x = xc + side / 2 > width ? width - side : std::max<std::int64_t>(0, xc - side / 2);
  box.y = yc + side / 2 > height ? height - side : std::max<std::int64_t>(0, yc - side / 2);
  box.x = std::min(box.x, width - side);  // an odd side can overhang by one pixel as released
  box.y = std::min(box.y, height - side);
  return box;
}

template <class Impl>
Impl& child(AsenPp& m, const std::string& name) {
  return *std::dynamic_pointer_cast<Impl>(m.named_children()[name]);
}

EmbedInput input_of(const torch::Tensor& map, const torch::Tensor& images) {
  return EmbedInput{map.mean({2, 3}), map, images};
}

}  // namespace

TEST(AsenPp, TheCropBoxIsTheReleasedLoop) {
  torch::manual_seed(0);
  for (const auto& [height, width] : {std::pair{10, 10}, std::pair{12, 9}, std::pair{7, 16}})
    for (double threshold : {0.0, 0.1, 0.4, 0.9})
      for (int trial = 0; trial < 5; ++trial) {
        // A peaked map, as a softmax over positions gives.
        const torch::Tensor alpha =
            torch::softmax(3 * torch::randn({12}, torch::kDouble), 0).view({3, 4});
        const CropBox got = asen_pp::attention_box(alpha, height, width, threshold);
        const CropBox want = naive_box(alpha, height, width, threshold);
        EXPECT_EQ(got.x, want.x) << height << "x" << width << " t=" << threshold;
        EXPECT_EQ(got.y, want.y) << height << "x" << width << " t=" << threshold;
        EXPECT_EQ(got.size, want.size) << height << "x" << width << " t=" << threshold;
        EXPECT_GE(got.x, 0);
        EXPECT_GE(got.y, 0);
        EXPECT_LE(got.x + got.size, width);
        EXPECT_LE(got.y + got.size, height);
      }
  // By hand: all weight on the map's top-left position of a 2 × 2 map over an 8 × 8 image. The
  // upsampled map is 1 on rows and columns 0-1, falls linearly over 2-5 and is 0 from 6 on; with
  // threshold 0.5 the pixels (r, c) with both r, c ≤ 3 remain: a 4 × 4 box at the corner.
  const torch::Tensor corner = torch::tensor({{1.0, 0.0}, {0.0, 0.0}}, torch::kDouble);
  const CropBox box = asen_pp::attention_box(corner, 8, 8, 0.5);
  EXPECT_EQ(box.x, 0);
  EXPECT_EQ(box.y, 0);
  EXPECT_EQ(box.size, 4);
  // A constant map keeps the whole image (the release divides by zero there).
  const CropBox flat = asen_pp::attention_box(torch::full({2, 2}, 0.25, torch::kDouble), 6, 9, 0.1);
  EXPECT_EQ(flat.size, 6);
  EXPECT_EQ(flat.y, 0);
  EXPECT_EQ(flat.x, 1);
}

// Every image b and attribute k by itself: the naive box of the global attention α_bk, the crop
// sliced out of image b and resized, the local trunk and the local branch under attribute k alone,
// then √β·g/‖g‖ ⊕ √(1−β)·l/‖l‖. Both sides compute in double with the same layers on batches of
// different sizes: only the order of their sums differs, by at most n·2⁻⁵³ relative for sums of
// n ≤ 2304 terms (3 × 3 × 256 in layer3) through about 20 layers of values below 100, below 1e-10.
TEST(AsenPp, JointEmbeddingIsTheCropOfEachAttributesAttentionThroughTheLocalBranch) {
  torch::manual_seed(1);
  const auto m = make(asen_pp::Stage::Joint);
  m->eval();
  const torch::Tensor map = torch::randn({3, kChannels, 3, 3}, torch::kDouble);
  const torch::Tensor images = torch::randn({3, 3, kImage, kImage}, torch::kDouble);
  const torch::Tensor psi = m->embed(input_of(map, images));
  ASSERT_EQ(psi.sizes(), (std::vector<std::int64_t>{3, kConditions, 2 * kEmbedding}));
  const torch::Tensor alpha = m->attention_maps(input_of(map, images));
  auto& global = child<asen_pp::BranchImpl>(*m, "global_branch");
  auto& local = child<asen_pp::BranchImpl>(*m, "local_branch");
  auto& trunk = child<asen_pp::LocalResNetImpl>(*m, "local_trunk");
  const torch::Tensor attributes = parameter(*m, "attributes.weight");
  torch::NoGradGuard no_grad;
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t k = 0; k < kConditions; ++k) {
      const torch::Tensor a = attributes.slice(0, k, k + 1);
      const torch::Tensor g = global.embed(map.slice(0, b, b + 1), a).first.view(-1);
      const CropBox box = naive_box(alpha[b][k], kImage, kImage, 0.3);
      const torch::Tensor crop = F::interpolate(images.slice(0, b, b + 1)
                                                    .slice(2, box.y, box.y + box.size)
                                                    .slice(3, box.x, box.x + box.size),
                                                F::InterpolateFuncOptions()
                                                    .size(std::vector<std::int64_t>{16, 16})
                                                    .mode(torch::kBilinear)
                                                    .align_corners(false)
                                                    .antialias(true));
      const torch::Tensor l = local.embed(trunk.forward(crop), a).first.view(-1);
      const torch::Tensor want =
          torch::cat({std::sqrt(0.6) * g / g.norm(), std::sqrt(0.4) * l / l.norm()});
      EXPECT_LT((psi[b][k] - want).abs().max().item<double>(), 1e-10) << b << " " << k;
    }
  EXPECT_TRUE(psi.norm(2, {2}).allclose(torch::ones({3, kConditions}, torch::kDouble)));
}

// The first stage's ψ is the global branch alone, normalised: what the joint stage's first half
// holds, scaled by √β, for the same parameters.
TEST(AsenPp, GlobalStageIsTheJointStagesFirstHalf) {
  torch::manual_seed(2);
  const auto joint = make(asen_pp::Stage::Joint);
  const auto first = make(asen_pp::Stage::Global);
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : first->named_parameters())
      p.value().copy_(parameter(*joint, p.key()));
  }
  joint->eval(), first->eval();
  const torch::Tensor map = torch::randn({2, kChannels, 2, 3}, torch::kDouble);
  const torch::Tensor images = torch::randn({2, 3, kImage, kImage}, torch::kDouble);
  const torch::Tensor half = joint->embed(input_of(map, images)).narrow(2, 0, kEmbedding);
  const torch::Tensor alone = first->embed(EmbedInput{map.mean({2, 3}), map});
  EXPECT_EQ(alone.size(2), kEmbedding);
  EXPECT_LT((half / std::sqrt(0.6) - alone).abs().max().item<double>(), 1e-12);
}

// Central differences of f = Σ ψ ⊙ R in double against autograd over every entry of the feature
// map (the global branch) and every 23rd pixel of the images (the crops through the local trunk;
// the boxes themselves do not move under a step of 1e-6). With h = 1e-6 the truncation error is
// about h²/6·|f'''| (≈ 1e-12) and the rounding error ε·|f|/h (≈ 1e-9 for |f| < 10): 1e-7 bounds
// both, far below any gradient a wrong derivative gives. In evaluation mode: the local trunk's
// batch norm over two crops of 1 × 1 positions in training mode has a third derivative large
// enough to break that bound, and its gradient is LibTorch's own (the global branch has none).
TEST(AsenPp, GradientsAreFiniteDifferencesInDouble) {
  torch::manual_seed(3);
  const auto m = make(asen_pp::Stage::Joint);
  m->eval();
  const torch::Tensor map = torch::randn({2, kChannels, 3, 3}, torch::kDouble);
  const torch::Tensor images = torch::randn({2, 3, kImage, kImage}, torch::kDouble);
  const torch::Tensor weights = torch::randn({2, kConditions, 2 * kEmbedding}, torch::kDouble);
  const auto f = [&](const torch::Tensor& x, const torch::Tensor& i) {
    return (m->embed(input_of(x, i)) * weights).sum();
  };
  const torch::Tensor map_in = map.clone().requires_grad_(true);
  const torch::Tensor images_in = images.clone().requires_grad_(true);
  f(map_in, images_in).backward();
  torch::NoGradGuard no_grad;
  constexpr double h = 1e-6;
  for (const auto& [tensor, analytic, stride, name] :
       {std::tuple{map, map_in.grad(), 1, "map"},
        std::tuple{images, images_in.grad(), 23, "image"}}) {
    const torch::Tensor flat = tensor.view(-1);
    for (std::int64_t i = 0; i < flat.numel(); i += stride) {
      const double saved = flat[i].item<double>();
      flat[i] = saved + h;
      const double up = f(map, images).item<double>();
      flat[i] = saved - h;
      const double down = f(map, images).item<double>();
      flat[i] = saved;
      EXPECT_NEAR(analytic.view(-1)[i].item<double>(), (up - down) / (2 * h), 1e-7)
          << name << " " << i;
    }
  }
  EXPECT_GT(images_in.grad().abs().sum().item<double>(), 0.0);
}

// A triplet under attribute k: the fused distance is 1 − ψ_a·ψ_b = β(1 − g_a·g_b) + (1−β)(1 −
// l_a·l_b), and the terms of the joint loss are those of each branch and the alignment.
TEST(AsenPp, JointStageScoresTheCombinationAndPublishesEachBranchsTerms) {
  torch::manual_seed(4);
  const auto m = make(asen_pp::Stage::Joint);
  m->eval();
  const torch::Tensor map = torch::randn({3, kChannels, 2, 2}, torch::kDouble);
  const torch::Tensor images = torch::randn({3, 3, kImage, kImage}, torch::kDouble);
  ItemFeatures items;
  items.phi = map.mean({2, 3});
  items.psi = m->embed(input_of(map, images));
  Comparisons c = Comparisons::triplets(torch::tensor({{0, 1, 2}, {2, 0, 1}}, torch::kLong));
  c.conditions = torch::tensor({1, 0}, torch::kLong);
  const ComparisonScores s = m->score(items, c);
  const auto part = [&](std::int64_t item, std::int64_t k, bool local) {
    const torch::Tensor half = items.psi[item][k].narrow(0, local ? kEmbedding : 0, kEmbedding);
    return half / half.norm();
  };
  const auto d = [](const torch::Tensor& a, const torch::Tensor& b) {
    return 1 - a.dot(b).item<double>();
  };
  for (std::int64_t i = 0; i < 2; ++i) {
    const std::int64_t k = c.conditions[i].item<std::int64_t>();
    const std::int64_t a = c.first[i].item<std::int64_t>(), p = c.second[i].item<std::int64_t>(),
                       n = c.third[i].item<std::int64_t>();
    const double gp = d(part(a, k, false), part(p, k, false));
    const double lp = d(part(a, k, true), part(p, k, true));
    EXPECT_NEAR(s.fused_second[i].item<double>(), 0.6 * gp + 0.4 * lp, 1e-12);
    EXPECT_NEAR(s.aux.at("global_close")[i].item<double>(), gp, 1e-12);
    EXPECT_NEAR(s.aux.at("local_close")[i].item<double>(), lp, 1e-12);
    EXPECT_NEAR(s.aux.at("global_far")[i].item<double>(), d(part(a, k, false), part(n, k, false)),
                1e-12);
    EXPECT_NEAR(s.aux.at("local_far")[i].item<double>(), d(part(a, k, true), part(n, k, true)),
                1e-12);
    double alignment = 0;
    for (std::int64_t x : {a, p, n})
      alignment += d(part(x, k, false), part(x, k, true));
    EXPECT_NEAR(s.aux.at("alignment")[i].item<double>(), alignment, 1e-12);
  }
}

TEST(AsenPp, JointStageStartsFromTheFirstStagesExportedWeights) {
  torch::manual_seed(5);
  const auto first = make(asen_pp::Stage::Global);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "asen_pp_initial";
  std::filesystem::create_directories(dir);
  nn::StateDict exported = {{"backbone.conv1.weight", torch::zeros({1})}};
  for (const auto& p : first->named_parameters())
    exported.emplace_back("condition_module." + p.key(), p.value().detach());
  nn::write_state_dict(dir / "s1.pt", exported);
  auto options = small_options(asen_pp::Stage::Joint);
  options.initial_weights = (dir / "s1.pt").string();
  wscsl::testing::write_resnet18_weights(dir / "resnet18.pt");
  options.local_weights = (dir / "resnet18.pt").string();
  AsenPp joint(options);
  for (const auto& p : first->named_parameters())
    EXPECT_TRUE(parameter(joint, p.key()).to(torch::kDouble).equal(p.value())) << p.key();
  EXPECT_TRUE(parameter(joint, "local_trunk.conv1.weight")
                  .equal(nn::read_state_dict(dir / "resnet18.pt")[0].second))
      << "the local trunk takes the torchvision file's conv1";
  // Weights of another shape: refused naming the file and the way to write the right one.
  auto other = small_options(asen_pp::Stage::Global);
  other.attribute_dim = 4;
  nn::StateDict wrong;
  for (const auto& p : AsenPp(other).named_parameters())
    wrong.emplace_back("condition_module." + p.key(), p.value().detach());
  nn::write_state_dict(dir / "wrong.pt", wrong);
  options.initial_weights = (dir / "wrong.pt").string();
  try {
    AsenPp refused(options);
    FAIL() << "weights of another shape were accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong.pt: not the first stage of this asen_pp"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("wscsl export-weights"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(AsenPp, RefusesWhatItCannotUse) {
  const Facts facts = wscsl::testing::with_images(
      wscsl::testing::with_feature_map(wscsl::testing::facts(kConditions, 7), kChannels), 3, kImage,
      kImage);
  const auto m = wscsl::testing::build<ConditionModule>(
      "asen_pp", "stage = \"joint\"\nlocal_trunk = \"resnet18\"\nembedding_dim = 4", facts);
  EXPECT_TRUE(m->contract().needs_resource(Resource::ItemImages));
  EXPECT_TRUE(m->contract().needs_resource(Resource::FeatureMap));
  EXPECT_EQ(m->output_dim(), 8);
  try {
    m->embed(EmbedInput{torch::rand({2, kChannels}), torch::rand({2, kChannels, 3, 3})});
    FAIL() << "the joint stage embedded without the images";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the images"), std::string::npos) << e.what();
  }
  const auto first = wscsl::testing::build<ConditionModule>("asen_pp", "", facts);
  EXPECT_FALSE(first->contract().needs_resource(Resource::ItemImages));
  try {
    first->embed(torch::rand({2, kChannels}));
    FAIL() << "φ alone was accepted";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the backbone's feature map [B, C, h, w]"),
              std::string::npos)
        << e.what();
  }
  for (const auto& [body, message] :
       {std::pair{"reduction = 8", "leaves no hidden unit: the feature map has 4 channels"},
        std::pair{"local_size = 64", "stage = \"joint\""},
        std::pair{"stage = \"joint\"\nthreshold = 1.0", "threshold"},
        std::pair{"stage = \"joint\"\nbeta = 0.0", "beta"}}) {
    const Diagnostics d =
        wscsl::testing::bind_diagnostics(Kind::ConditionModule, "asen_pp", body, facts);
    EXPECT_EQ(d.error_count(), 1u) << body << "\n" << d.format();
    EXPECT_NE(d.format().find(message), std::string::npos) << d.format();
  }
}
