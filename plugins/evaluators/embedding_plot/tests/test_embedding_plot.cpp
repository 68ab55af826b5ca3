#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include <unistd.h>

#include "../src/projection.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"

using namespace wscsl;
using namespace wscsl::embedding_plot;
namespace fs = std::filesystem;

namespace {

// Three clusters of 20 points in 10-D: centres 10 apart along the first axes, spread 0.1.
torch::Tensor clusters() {
  torch::manual_seed(0);
  std::vector<torch::Tensor> parts;
  for (int c = 0; c < 3; ++c) {
    torch::Tensor centre = torch::zeros({10}, torch::kDouble);
    centre[c] = 10.0;
    parts.push_back(centre + 0.1 * torch::randn({20, 10}, torch::kDouble));
  }
  return torch::cat(parts);
}

fs::path temporary_directory(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST(Pca, ProjectsOnTheLeadingAxesWithADeterministicSign) {
  // x_i = t_i u + s_i v + (5, 5) with u = (1, 2)/√5, v = (2, −1)/√5: variance along u is larger,
  // and each axis' largest loading (2/√5 for both) is positive, so the projection is (t, s).
  const std::vector<double> t = {-3, -1, 1, 3}, s = {0.5, -0.5, -0.5, 0.5};
  const double r5 = std::sqrt(5.0);
  torch::Tensor x = torch::empty({4, 2}, torch::kDouble);
  for (std::int64_t i = 0; i < 4; ++i) {
    const auto k = static_cast<std::size_t>(i);
    x[i][0] = 5 + t[k] / r5 + 2 * s[k] / r5;
    x[i][1] = 5 + 2 * t[k] / r5 - s[k] / r5;
  }
  const torch::Tensor p = pca_2d(x);
  for (std::int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(p[i][0].item<double>(), t[static_cast<std::size_t>(i)], 1e-12);
    EXPECT_NEAR(p[i][1].item<double>(), s[static_cast<std::size_t>(i)], 1e-12);
  }
  // One dimension: the second coordinate is zero.
  const torch::Tensor line = pca_2d(torch::tensor({{1.0}, {3.0}}, torch::kDouble));
  EXPECT_DOUBLE_EQ(line[0][0].item<double>(), -1.0);  // centred, largest loading positive
  EXPECT_DOUBLE_EQ(line[1][0].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(line[1][1].item<double>(), 0.0);
}

TEST(Tsne, KeepsWellSeparatedClustersApartAndIsDeterministic) {
  TsneOptions o;
  o.perplexity = 10;
  o.iterations = 400;
  o.seed = 3;
  const torch::Tensor y = tsne_2d(clusters(), o);
  ASSERT_EQ(y.sizes(), (std::vector<std::int64_t>{60, 2}));
  // Every point's nearest neighbour in the map is from its own cluster, and the closest points
  // of two clusters are farther apart than the widest cluster is across.
  const torch::Tensor d = torch::cdist(y, y);
  double widest = 0, closest = 1e300;
  for (std::int64_t i = 0; i < 60; ++i) {
    double nearest = 1e300;
    std::int64_t nearest_j = -1;
    for (std::int64_t j = 0; j < 60; ++j) {
      if (i == j) continue;
      const double v = d[i][j].item<double>();
      if (v < nearest) nearest = v, nearest_j = j;
      if (i / 20 == j / 20)
        widest = std::max(widest, v);
      else
        closest = std::min(closest, v);
    }
    EXPECT_EQ(nearest_j / 20, i / 20) << "point " << i;
  }
  EXPECT_GT(closest, widest);
  EXPECT_TRUE(torch::equal(y, tsne_2d(clusters(), o)));
  o.seed = 4;
  EXPECT_FALSE(torch::equal(y, tsne_2d(clusters(), o)));
}

TEST(EmbeddingPlot, WritesADecodablePngWithOnePanelPerEmbedding) {
  // 30 images, two embeddings of 10-D; factor 0 has three values, factor 1 two.
  const torch::Tensor x = clusters().slice(0, 0, 60, 2).to(torch::kFloat);  // 30 points
  const torch::Tensor psi = torch::stack({x, x.flip(0)}, 1);
  EmbeddingTable t = wscsl::testing::make_table(Split::Test, psi, {{0, 1, 2}}, {0});
  t.factors = torch::stack({torch::div(torch::arange(30), 10, "floor"), torch::arange(30) % 2}, 1);
  std::map<std::string, torch::Tensor> shared = {
      {aligned::assignment_key(aligned::Strategy::Ot), torch::tensor({1, 0})},
      {aligned::condition_of_embedding_key(aligned::Strategy::Ot), torch::tensor({1, 0})}};
  const fs::path dir = temporary_directory("wscsl_embedding_plot");
  for (const std::string projection : {"pca", "tsne"}) {
    const std::string tsne_only = projection == "tsne" ? "\niterations = 100" : "";
    auto e = wscsl::testing::build<Evaluator>(
        "embedding_plot",
        "projection = \"" + projection + "\"\npanel_size = 200\npoints = 25" + tsne_only);
    wscsl::testing::TableModule module(2, 10, {0.5, 0.5});
    const EvalReport r = wscsl::testing::run_evaluator(
        *e, module, t, t, wscsl::testing::dataset_info({"group", "parity"}), &shared, dir);
    ASSERT_EQ(r.artifacts.size(), 1u);
    EXPECT_EQ(r.artifacts[0], dir / ("embeddings_" + projection + ".png"));
    const plot::Canvas png = plot::Canvas::read_png(r.artifacts[0]);
    EXPECT_EQ(png.height(), 30 + 200);  // a title line and one row of panels
    EXPECT_GT(png.width(), 2 * 200);    // two panels with their legends
    // Points of value 0 and 1 are drawn in the first two palette colours.
    int first = 0, second = 0;
    for (int py = 0; py < png.height(); ++py)
      for (int px = 0; px < png.width(); ++px) {
        first += png.pixel(px, py) == plot::palette(0);
        second += png.pixel(px, py) == plot::palette(1);
      }
    EXPECT_GT(first, 20);
    EXPECT_GT(second, 20);
  }
  auto grid = wscsl::testing::build<Evaluator>(
      "embedding_plot", "projection = \"pca\"\npanels = \"all\"\npanel_size = 150");
  wscsl::testing::TableModule module(2, 10, {0.5, 0.5});
  const EvalReport r = wscsl::testing::run_evaluator(
      *grid, module, t, t, wscsl::testing::dataset_info({"group", "parity"}), &shared, dir);
  EXPECT_EQ(plot::Canvas::read_png(r.artifacts.at(0)).height(), 30 + 2 * 150);
  fs::remove_all(dir);
}

// Declared, so that `wscsl check` refuses a split of fewer than two images before anything trains.
TEST(EmbeddingPlot, NeedsTwoImagesInTheSplit) {
  const auto e = wscsl::testing::build<Evaluator>("embedding_plot");
  ASSERT_EQ(e->contract().table_rows.size(), 1u);
  EXPECT_EQ(e->contract().table_rows[0].rows, 2);
}
