#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "built_pipeline.hpp"
#include "evaluation/evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "pipelines.hpp"
#include "run/curves.hpp"
#include "wscsl/data/npy.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/util/rng.hpp"

using namespace wscsl;
using namespace wscsl::host;

TEST(Evaluation, ASplitOfTwentyThousandTripletsEmbedsEachOfItsFiveThousandImagesOnce) {
  // The tiny pipeline's evaluators (and two more) on a 5,000-image, 20,000-triplet test split:
  // the backbone sees every image exactly once, however many triplets reference it.
  Pipeline pipeline = test::built_pipeline(test::tiny_pipeline() + R"(
[[evaluators]]
type = "reversed_triplets"

[[evaluators]]
type = "retrieval"
queries = 100
)");
  const std::int64_t images = 5000, triplets = 20000;
  DatasetInfo info = wscsl::testing::dataset_info({"a", "b"});
  info.height = info.width = 2;
  SplitData test;
  test.num_images = images;
  // Every image appears in at least one triplet: the anchors run through all of them four times.
  const std::vector<std::int64_t> shuffled = seeded_permutation(7, triplets);
  torch::Tensor t = torch::empty({triplets, 3}, torch::kLong);
  for (std::int64_t i = 0; i < triplets; ++i) {
    t[i][0] = i % images;
    t[i][1] = shuffled[static_cast<std::size_t>(i)] % images;
    t[i][2] = (i * 7 + 3) % images;
  }
  test.triplets = t;
  test.conditions = torch::arange(triplets) % 2;
  test.factors = torch::stack({torch::arange(images) % 3, torch::arange(images) % 5}, 1);
  pipeline.dataset = std::make_shared<wscsl::testing::FixedDataset>(
      info, std::map<Split, SplitData>{{Split::Test, test}});
  auto backbone = std::make_shared<wscsl::testing::CountingBackbone>(4);
  pipeline.backbone = backbone;
  pipeline.condition_module =
      std::make_shared<wscsl::testing::TableModule>(2, 2, std::vector<double>{0.5, 0.5});

  const EmbeddingTable table = embed_split(pipeline, Split::Test, 1024);
  const EvaluationResult result = evaluate(pipeline, table, table, true, {});
  EXPECT_EQ(backbone->images_embedded(), images);
  ASSERT_EQ(backbone->calls_per_image().size(), static_cast<std::size_t>(images));
  for (const auto& [id, calls] : backbone->calls_per_image())
    ASSERT_EQ(calls, 1) << "image " << id;
  EXPECT_EQ(table.triplets.size(), triplets);
  EXPECT_NE(result.find("alignment/ot_accuracy"), nullptr);
  EXPECT_NE(result.find("reversed_triplets/reversed_valid"), nullptr);
  EXPECT_NE(result.find("retrieval/map"), nullptr);
}

TEST(Npy, HeadersAreNumpyFormatOnePaddedToSixtyFourBytes) {
  for (const auto& [shape, spelled] :
       std::vector<std::pair<std::vector<std::int64_t>, std::string>>{
           {{3}, "(3,)"}, {{84, 8}, "(84, 8)"}, {{5, 2, 16}, "(5, 2, 16)"}, {{}, "()"}}) {
    const std::string h = npy_header("<f4", shape);
    EXPECT_EQ(h.size() % 64, 0u) << spelled;
    EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    EXPECT_EQ(static_cast<unsigned char>(h[8]) + 256u * static_cast<unsigned char>(h[9]),
              h.size() - 10);
    EXPECT_EQ(h.substr(10, h.find('}') - 9),
              "{'descr': '<f4', 'fortran_order': False, 'shape': " + spelled + ", }");
    EXPECT_EQ(h.back(), '\n');
  }
}

TEST(Curves, ReadsTheMetricsLogAndDrawsLossAndValidationCurves) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_curves_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "metrics.jsonl")
      << "{\"epoch\": 1, \"loss\": 0.5, \"val/alignment/ot_accuracy\": 0.6, "
         "\"val/alignment/ot_accuracy/color\": 0.9}\n"
         "{\"epoch\": 2, \"loss\": 0.25, \"val/alignment/ot_accuracy\": null}\n"
         "{\"epoch\": 3, \"loss\": 1e-1, \"val/alignment/ot_accuracy\": 0.75}\n";
  const MetricsLog log = read_metrics_log(dir / "metrics.jsonl");
  EXPECT_EQ(log.epochs, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(log.series.at("loss"), (std::vector<double>{0.5, 0.25, 0.1}));
  const auto& ot = log.series.at("val/alignment/ot_accuracy");
  EXPECT_EQ(ot[0], 0.6);
  EXPECT_TRUE(std::isnan(ot[1]));
  EXPECT_EQ(ot[2], 0.75);
  const auto& color = log.series.at("val/alignment/ot_accuracy/color");
  EXPECT_EQ(color.size(), 3u);
  EXPECT_TRUE(std::isnan(color[2]));

  EXPECT_TRUE(is_summary_metric("val/alignment/ot_accuracy"));
  EXPECT_FALSE(is_summary_metric("val/alignment/ot_accuracy/color"));
  EXPECT_FALSE(is_summary_metric("val/alignment/ot_converged"));
  EXPECT_FALSE(is_summary_metric("val/reversed_triplets/sweep_valid@0.5"));
  EXPECT_FALSE(is_summary_metric("loss"));

  ASSERT_TRUE(write_training_curves(log, dir / "curves.png"));
  const plot::Canvas png = plot::Canvas::read_png(dir / "curves.png");
  EXPECT_EQ(png.width(), 840);
  int loss_pixels = 0;  // the loss and the one validation series are both drawn in palette(0)
  for (int y = 0; y < png.height(); ++y)
    for (int x = 0; x < png.width(); ++x)
      loss_pixels += png.pixel(x, y) == plot::palette(0);
  EXPECT_GT(loss_pixels, 100);
  EXPECT_FALSE(write_training_curves(MetricsLog{}, dir / "none.png"));
  EXPECT_FALSE(fs::exists(dir / "none.png"));
  fs::remove_all(dir);
}
