#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/util/rng.hpp"

using namespace wscsl;
namespace fs = std::filesystem;

TEST(RetrievalGrid, FramesMatchingNeighboursGreenAndOthersRed) {
  // Eight images on a line (ψ1 = ψ2 = position); the query is the first of the seeded sample.
  // Factor 0 is 0 for every image (all neighbours match); factor 1 is 1 only for the query.
  const std::int64_t query = seeded_permutation(0, 8)[0];
  const torch::Tensor positions = torch::arange(8, torch::kFloat);
  EmbeddingTable t = wscsl::testing::make_table(
      Split::Test, torch::stack({positions, positions}, 1).reshape({8, 2, 1}), {{0, 1, 2}}, {0});
  t.factors = torch::zeros({8, 2}, torch::kLong);
  t.factors[query][1] = 1;
  std::map<std::string, torch::Tensor> shared = {
      {aligned::assignment_key(aligned::Strategy::Ot), torch::tensor({0, 1})},
      {aligned::condition_of_embedding_key(aligned::Strategy::Ot), torch::tensor({0, 1})}};
  const fs::path dir = fs::temp_directory_path() / ("wscsl_grid_" + std::to_string(::getpid()));
  auto e = wscsl::testing::build<Evaluator>("retrieval_grid", "queries = 1\nk = 3\ncell = 20");
  wscsl::testing::TableModule module(2, 1, {0.5, 0.5});
  const EvalReport r = wscsl::testing::run_evaluator(
      *e, module, t, t, wscsl::testing::dataset_info({"shape", "size"}), &shared, dir);
  ASSERT_EQ(r.artifacts.size(), 1u);
  const plot::Canvas png = plot::Canvas::read_png(r.artifacts[0]);
  // Layout (README): images of `cell` pixels in 3-pixel frames, 4 pixels apart; a 30-pixel title
  // and a 22-pixel heading per condition.
  const int pitch = 20 + 2 * 3 + 4;
  EXPECT_EQ(png.width(), 4 + pitch * 4 + 4);
  EXPECT_EQ(png.height(), 30 + 2 * (22 + pitch));
  for (int j = 1; j <= 3; ++j) {
    EXPECT_EQ(png.pixel(4 + j * pitch, 30 + 22), plot::kGreen) << "shape, neighbour " << j;
    EXPECT_EQ(png.pixel(4 + j * pitch, 30 + 2 * 22 + pitch), plot::kRed) << "size, neighbour " << j;
  }
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "shown_matching/shape"), 1.0);
  EXPECT_DOUBLE_EQ(wscsl::testing::metric(r, "shown_matching/size"), 0.0);
  fs::remove_all(dir);
}

TEST(RetrievalGrid, NeedsEnoughImagesAndAnArtefactDirectory) {
  EmbeddingTable t =
      wscsl::testing::make_table(Split::Test, torch::zeros({4, 1, 1}), {{0, 1, 2}}, {0});
  t.factors = torch::zeros({4, 1}, torch::kLong);
  std::map<std::string, torch::Tensor> shared = {
      {aligned::assignment_key(aligned::Strategy::Ot), torch::tensor({0})},
      {aligned::condition_of_embedding_key(aligned::Strategy::Ot), torch::tensor({0})}};
  wscsl::testing::TableModule module(1, 1, {1.0});
  auto e = wscsl::testing::build<Evaluator>("retrieval_grid", "queries = 2\nk = 3");
  // Declared, so that `wscsl check` refuses a split with fewer images before anything trains.
  ASSERT_EQ(e->contract().table_rows.size(), 1u);
  EXPECT_EQ(e->contract().table_rows[0].rows, 5);
  EXPECT_EQ(e->contract().table_rows[0].because, "queries = 2 and k = 3");
  EXPECT_THROW(wscsl::testing::run_evaluator(*e, module, t, t, wscsl::testing::dataset_info({"a"}),
                                             &shared, fs::temp_directory_path()),
               Error);
  auto fits = wscsl::testing::build<Evaluator>("retrieval_grid", "queries = 1\nk = 3");
  EXPECT_THROW(wscsl::testing::run_evaluator(*fits, module, t, t,
                                             wscsl::testing::dataset_info({"a"}), &shared),
               Error);
}

TEST(RetrievalGrid, ShowsTheImagesWithTheDatasetsNormalisationUndone) {
  // The fixture's images are 0.5 everywhere but their first value; a dataset that declares
  // ImageNet's normalisation gave the model (x/255 − mean)/std = 0.5, so the picture shows
  // x/255 = 0.5·std + mean: red 0.5·0.229 + 0.485 = 0.5995 → 153 of 255, green 0.568 → 145,
  // blue 0.5185 → 132 (the undone 0.5 itself would be gray 128).
  const torch::Tensor positions = torch::arange(8, torch::kFloat);
  EmbeddingTable t =
      wscsl::testing::make_table(Split::Test, positions.reshape({8, 1, 1}), {{0, 1, 2}}, {0});
  t.factors = torch::zeros({8, 1}, torch::kLong);
  std::map<std::string, torch::Tensor> shared = {
      {aligned::assignment_key(aligned::Strategy::Ot), torch::tensor({0})},
      {aligned::condition_of_embedding_key(aligned::Strategy::Ot), torch::tensor({0})}};
  DatasetInfo info = wscsl::testing::dataset_info({"shape"});
  info.images.normalization = PixelNormalization::ImageNet;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_grid_" + std::to_string(::getpid()));
  auto e = wscsl::testing::build<Evaluator>("retrieval_grid", "queries = 1\nk = 1\ncell = 20");
  wscsl::testing::TableModule module(1, 1, {1.0});
  const EvalReport r = wscsl::testing::run_evaluator(*e, module, t, t, info, &shared, dir);
  ASSERT_EQ(r.artifacts.size(), 1u);
  const plot::Canvas png = plot::Canvas::read_png(r.artifacts[0]);
  // The centre of the query's cell: 4-pixel margin and 3-pixel frame, under the 30-pixel title and
  // the 22-pixel heading.
  const plot::Color shown = png.pixel(4 + 3 + 10, 30 + 22 + 3 + 10);
  EXPECT_EQ(shown, (plot::Color{153, 145, 132}))
      << int(shown.r) << " " << int(shown.g) << " " << int(shown.b);
  fs::remove_all(dir);
}
