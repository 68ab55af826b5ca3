#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench.hpp"

using namespace wscsl::host;

TEST(Bench, MeanAndSampleStandardDeviationOfTheFiniteValues) {
  const MeanStd m = mean_std({0.5, 0.7, NAN, 0.9});
  EXPECT_EQ(m.count, 3u);
  EXPECT_NEAR(m.mean, 0.7, 1e-15);
  EXPECT_NEAR(m.std, 0.2, 1e-15);  // sqrt((0.04 + 0 + 0.04) / 2)
  const MeanStd one = mean_std({0.25});
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.mean, 0.25);
  EXPECT_EQ(one.std, 0.0);
  EXPECT_EQ(mean_std({NAN}).count, 0u);
}

TEST(Bench, ReadsResultsJsonInOrderAndPicksThePapersColumns) {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("wscsl_results_" + std::to_string(::getpid()));
  std::ofstream(file) << "{\n  \"checkpoint\": \"x/best.pt\",\n  \"epoch\": 4,\n  \"metrics\": {\n"
                         "    \"alignment/ot_accuracy\": 0.75,\n"
                         "    \"retrieval/map/color\": 0.5,\n"
                         "    \"retrieval/map/background\": null,\n"
                         "    \"retrieval/map\": 0.25\n  }\n}\n";
  const RunMetrics metrics = read_results_json(file);
  fs::remove(file);
  ASSERT_EQ(metrics.size(), 4u);
  EXPECT_EQ(metrics[0], (std::pair<std::string, double>{"alignment/ot_accuracy", 0.75}));
  EXPECT_EQ(metrics[1].first, "retrieval/map/color");
  EXPECT_TRUE(std::isnan(metrics[2].second));
  const std::vector<BenchColumn> columns =
      bench_columns({metrics, {{"triplet_accuracy/accuracy", 0.5}}});
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].heading, "OT");
  EXPECT_EQ(columns[1].metric, "triplet_accuracy/accuracy");
  EXPECT_EQ(columns[2].heading, "MAP color");  // the results' order, not alphabetical
  EXPECT_EQ(columns[3].heading, "MAP background");
}
