// ASEN through the loader: both variants against hand-written loops over positions and channels,
// gradients against finite differences in double, the inputs it refuses, and supervised scoring.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace asen_tests {

constexpr std::int64_t kConditions = 3, kChannels = 4;

std::shared_ptr<ConditionModule> make_asen(const std::string& variant) {
  const std::string options = "variant = \"" + variant + "\"\ncommon_dim = 2\nreduction = 2\n" +
                              "embedding_dim = 5\n" +
                              (variant == "v2" ? "attribute_dim = 3\n" : "");
  auto m = wscsl::testing::build<ConditionModule>(
      "asen", options,
      wscsl::testing::with_feature_map(wscsl::testing::facts(kConditions, 7), kChannels));
  m->to(torch::kDouble);
  return m;
}

double value_at(const torch::Tensor& t, std::vector<std::int64_t> index) {
  torch::Tensor v = t;
  for (std::int64_t i : index)
    v = v[i];
  return v.item<double>();
}

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

// y = W x + b of a linear layer's parameters, by hand.
std::vector<double> linear(const torch::Tensor& w, const torch::Tensor& b,
                           const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(w.size(0)));
  for (std::int64_t o = 0; o < w.size(0); ++o) {
    double sum = b.defined() ? value_at(b, {o}) : 0.0;
    for (std::int64_t i = 0; i < w.size(1); ++i)
      sum += value_at(w, {o, i}) * x[static_cast<std::size_t>(i)];
    y[static_cast<std::size_t>(o)] = sum;
  }
  return y;
}

struct Naive {
  std::vector<std::vector<double>> attention;  // [k][position]
  std::vector<std::vector<double>> psi;        // [k][E]
};

// ASEN of image b of `map` [B, C, h, w] by loops, in evaluation mode (batch norm by its running
// statistics), from the module's own parameters.
Naive naive_asen(const ConditionModule& m, bool v2, const torch::Tensor& map, std::int64_t b) {
  const std::int64_t c_count = map.size(1), positions = map.size(2) * map.size(3);
  const torch::Tensor x_map = map[b].reshape({c_count, positions});
  const torch::Tensor conv_w = parameter(m, "spatial.conv.weight").flatten(1);
  const torch::Tensor conv_b = parameter(m, "spatial.conv.bias");
  const std::int64_t d = conv_w.size(0);
  Naive out;
  for (std::int64_t k = 0; k < kConditions; ++k) {
    // The attribute's query q [d] and channel features r.
    std::vector<double> q, r;
    if (v2) {
      const torch::Tensor e = parameter(m, "attributes.weight")[k];
      std::vector<double> ev(static_cast<std::size_t>(e.size(0)));
      for (std::int64_t i = 0; i < e.size(0); ++i)
        ev[static_cast<std::size_t>(i)] = value_at(e, {i});
      q = linear(parameter(m, "spatial_transform.weight"), parameter(m, "spatial_transform.bias"),
                 ev);
      for (double& v : q)
        v = std::tanh(v);
      r = linear(parameter(m, "channel_transform.weight"), parameter(m, "channel_transform.bias"),
                 ev);
    } else {
      for (std::int64_t i = 0; i < d; ++i)
        q.push_back(std::tanh(value_at(parameter(m, "spatial_table.weight"), {i, k})));
      for (std::int64_t i = 0; i < c_count; ++i)
        r.push_back(value_at(parameter(m, "channel_table.weight"), {i, k}));
    }
    for (double& v : r)
      v = std::max(0.0, v);
    // Scores of every position, then their softmax.
    std::vector<double> scores(static_cast<std::size_t>(positions));
    for (std::int64_t p = 0; p < positions; ++p) {
      double score = 0;
      for (std::int64_t j = 0; j < d; ++j) {
        double mj = value_at(conv_b, {j});
        for (std::int64_t c = 0; c < c_count; ++c)
          mj += value_at(conv_w, {j, c}) * value_at(x_map, {c, p});
        if (v2) {
          const double mean = value_at(m.named_buffers()["spatial.bn.running_mean"], {j});
          const double var = value_at(m.named_buffers()["spatial.bn.running_var"], {j});
          mj = (mj - mean) / std::sqrt(var + 1e-5) *
                   value_at(parameter(m, "spatial.bn.weight"), {j}) +
               value_at(parameter(m, "spatial.bn.bias"), {j});
        }
        const double product = std::tanh(mj) * q[static_cast<std::size_t>(j)];
        score += v2 ? product
                    : value_at(parameter(m, "spatial.score_conv.weight").flatten(), {j}) * product;
      }
      scores[static_cast<std::size_t>(p)] =
          v2 ? score / std::sqrt(static_cast<double>(d))
             : std::tanh(score + value_at(parameter(m, "spatial.score_conv.bias"), {0}));
    }
    double largest = scores[0], total = 0;
    for (double s : scores)
      largest = std::max(largest, s);
    std::vector<double> alpha;
    for (double s : scores)
      total += std::exp(s - largest);
    for (double s : scores)
      alpha.push_back(std::exp(s - largest) / total);
    // The attended channels, gated by the channel attention.
    std::vector<double> x(static_cast<std::size_t>(c_count), 0.0);
    for (std::int64_t c = 0; c < c_count; ++c)
      for (std::int64_t p = 0; p < positions; ++p)
        x[static_cast<std::size_t>(c)] +=
            alpha[static_cast<std::size_t>(p)] * value_at(x_map, {c, p});
    std::vector<double> joined = x;
    joined.insert(joined.end(), r.begin(), r.end());
    std::vector<double> hidden =
        linear(parameter(m, "channel.fc1.weight"), parameter(m, "channel.fc1.bias"), joined);
    for (double& v : hidden)
      v = std::max(0.0, v);
    const std::vector<double> gate =
        linear(parameter(m, "channel.fc2.weight"), parameter(m, "channel.fc2.bias"), hidden);
    for (std::size_t c = 0; c < x.size(); ++c)
      x[c] *= sigmoid(gate[c]);
    std::vector<double> psi = linear(parameter(m, "head.weight"), parameter(m, "head.bias"), x);
    double norm = 0;
    for (double v : psi)
      norm += v * v;
    for (double& v : psi)
      v /= std::sqrt(norm);
    out.attention.push_back(alpha);
    out.psi.push_back(psi);
  }
  return out;
}

EmbedInput input_of(const torch::Tensor& map) {
  return EmbedInput{map.mean({2, 3}), map};
}

TEST(Asen, BothVariantsAreTheHandWrittenLoopsOverPositionsAndChannels) {
  torch::manual_seed(0);
  for (const char* variant : {"v1", "v2"}) {
    const auto m = make_asen(variant);
    const bool v2 = std::string(variant) == "v2";
    if (v2) {  // batch norm with statistics and an affine map of its own
      torch::NoGradGuard no_grad;
      m->named_buffers()["spatial.bn.running_mean"].uniform_(-0.5, 0.5);
      m->named_buffers()["spatial.bn.running_var"].uniform_(0.5, 2.0);
      parameter(*m, "spatial.bn.weight").uniform_(0.5, 1.5);
      parameter(*m, "spatial.bn.bias").uniform_(-0.5, 0.5);
    }
    m->eval();
    const torch::Tensor map = torch::randn({2, kChannels, 3, 2}, torch::kDouble);
    const torch::Tensor psi = m->embed(input_of(map));
    const torch::Tensor attention = m->attention_maps(input_of(map));
    ASSERT_EQ(psi.sizes(), (std::vector<std::int64_t>{2, kConditions, 5}));
    ASSERT_EQ(attention.sizes(), (std::vector<std::int64_t>{2, kConditions, 3, 2}));
    // Both sides compute in double; each stage sums at most 12 terms of magnitude below 10, so
    // their rounding differs by at most 12 · 2⁻⁵³ · 10 ≈ 1.3e-14 per stage, and the six stages
    // (and tanh, exp, the norm) stay below 1e-13: 1e-12 bounds it.
    for (std::int64_t b = 0; b < 2; ++b) {
      const Naive naive = naive_asen(*m, v2, map, b);
      for (std::int64_t k = 0; k < kConditions; ++k) {
        for (std::int64_t p = 0; p < 6; ++p)
          EXPECT_NEAR(value_at(attention, {b, k, p / 2, p % 2}),
                      naive.attention[static_cast<std::size_t>(k)][static_cast<std::size_t>(p)],
                      1e-12)
              << variant;
        for (std::int64_t e = 0; e < 5; ++e)
          EXPECT_NEAR(value_at(psi, {b, k, e}),
                      naive.psi[static_cast<std::size_t>(k)][static_cast<std::size_t>(e)], 1e-12)
              << variant;
      }
    }
  }
}

// Central differences of f = Σ ψ ⊙ R in double against autograd, over every entry of a small map
// and of the spatial convolution's weight. With step h = 1e-6 the truncation error is about
// h²/6 · |f'''| (≈ 1e-13 here) and the rounding error about ε·|f|/h (≈ 1e-9 for |f| < 10): 1e-7
// bounds both and is far below the size of any gradient a wrong derivative gives.
TEST(Asen, GradientsAreFiniteDifferencesInDouble) {
  torch::manual_seed(1);
  for (const char* variant : {"v1", "v2"}) {
    const auto m = make_asen(variant);
    m->train();  // batch norm by the batch's statistics, whose gradient counts too
    const torch::Tensor map = torch::randn({2, kChannels, 2, 3}, torch::kDouble);
    const torch::Tensor weights = torch::randn({2, kConditions, 5}, torch::kDouble);
    const auto f = [&](const torch::Tensor& x) { return (m->embed(input_of(x)) * weights).sum(); };
    const torch::Tensor input = map.clone().requires_grad_(true);
    f(input).backward();
    const torch::Tensor conv = parameter(*m, "spatial.conv.weight");
    const torch::Tensor analytic_map = input.grad().clone();
    const torch::Tensor analytic_conv = conv.grad().clone();
    torch::NoGradGuard no_grad;
    constexpr double h = 1e-6;
    for (const auto& [tensor, analytic, name] :
         {std::tuple{map, analytic_map, "map"}, std::tuple{conv, analytic_conv, "conv"}}) {
      const torch::Tensor flat = tensor.view(-1);
      for (std::int64_t i = 0; i < flat.numel(); ++i) {
        const double saved = flat[i].item<double>();
        flat[i] = saved + h;
        const double up = f(map).item<double>();
        flat[i] = saved - h;
        const double down = f(map).item<double>();
        flat[i] = saved;
        EXPECT_NEAR(analytic.view(-1)[i].item<double>(), (up - down) / (2 * h), 1e-7)
            << variant << " " << name << " " << i;
      }
    }
  }
}

TEST(Asen, EmbedsEveryAttributeOnTheUnitSphereAndScoresATripletUnderItsOwn) {
  torch::manual_seed(2);
  const auto m = make_asen("v2");
  EXPECT_EQ(m->supervision(), Supervision::Conditioned);
  EXPECT_TRUE(m->contract().needs_resource(Resource::FeatureMap));
  EXPECT_TRUE(m->contract().provides_resource(Resource::AttentionMaps, ""));
  m->eval();
  const torch::Tensor map = torch::randn({3, kChannels, 2, 2}, torch::kDouble);
  ItemFeatures items;
  items.phi = map.mean({2, 3});
  items.psi = m->embed(input_of(map));
  EXPECT_TRUE(items.psi.norm(2, {2}).allclose(torch::ones({3, kConditions}, torch::kDouble)));
  EXPECT_TRUE(m->attention_maps(input_of(map))
                  .sum({2, 3})
                  .allclose(torch::ones({3, kConditions}, torch::kDouble)));
  Comparisons c = Comparisons::triplets(torch::tensor({{0, 1, 2}, {1, 2, 0}}, torch::kLong));
  c.conditions = torch::tensor({2, 0}, torch::kLong);
  const ComparisonScores s = m->score(items, c);
  // 1 − ψ_a·ψ_b under the triplet's attribute: the released MarginRankingLoss on dot products is
  // the margin loss on these distances.
  for (std::int64_t i = 0; i < 2; ++i) {
    const std::int64_t k = c.conditions[i].item<std::int64_t>();
    const torch::Tensor a = items.psi[c.first[i].item<std::int64_t>()][k];
    EXPECT_NEAR(s.fused_second[i].item<double>(),
                1 - a.dot(items.psi[c.second[i].item<std::int64_t>()][k]).item<double>(), 1e-12);
    EXPECT_NEAR(s.fused_third[i].item<double>(),
                1 - a.dot(items.psi[c.third[i].item<std::int64_t>()][k]).item<double>(), 1e-12);
    EXPECT_EQ(s.weights[i][k].item<double>(), 1.0);
  }
}

TEST(Asen, NeedsTheFeatureMapAndEnoughChannelsForItsReduction) {
  const auto m = make_asen("v2");
  try {
    m->embed(torch::rand({2, kChannels}, torch::kDouble));
    FAIL() << "φ alone was accepted";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the backbone's feature map [B, C, h, w]"),
              std::string::npos)
        << e.what();
  }
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::ConditionModule, "asen", "reduction = 8",
      wscsl::testing::with_feature_map(wscsl::testing::facts(kConditions, 7), kChannels));
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_NE(d.format().find("leaves no hidden unit: the feature map has 4 channels, fewer than 8"),
            std::string::npos)
      << d.format();
}

}  // namespace asen_tests
