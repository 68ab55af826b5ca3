#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench.hpp"
#include "wscsl/error.hpp"

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

TEST(Bench, AMethodsOwnSeedsReplaceTheSuitesAndAreChecked) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_seeds_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "p.toml") << "[dataset]\ntype = \"fashion_crb\"\n";
  const std::string methods =
      "[[methods]]\nname = \"cheap\"\npipeline = \"p.toml\"\n\n"
      "[[methods]]\nname = \"costly\"\npipeline = \"p.toml\"\nseeds = [";
  std::ofstream(dir / "good.toml") << "[suite]\nseeds = [1, 2, 3]\n\n" << methods << "2, 5]\n";
  const Suite suite = read_suite(dir / "good.toml");
  std::vector<std::pair<std::string, std::int64_t>> runs;
  for (const BenchRun& run : bench_runs(suite))
    runs.emplace_back(suite.methods[run.method].name, run.seed);
  const std::vector<std::pair<std::string, std::int64_t>> expected = {
      {"cheap", 1}, {"cheap", 2}, {"cheap", 3}, {"costly", 2}, {"costly", 5}};
  EXPECT_EQ(runs, expected);

  std::ofstream(dir / "bad.toml") << "[suite]\nseeds = [1]\n\n" << methods << "4, 4]\n";
  try {
    read_suite(dir / "bad.toml");
    ADD_FAILURE() << "repeated seeds of a method were accepted";
  } catch (const wscsl::ConfigError& e) {
    const std::string text = e.diagnostics().format();
    EXPECT_NE(text.find("bad.toml:11:9: error: [methods.1] 'seeds'"), std::string::npos) << text;
    EXPECT_NE(text.find("seeds must be distinct"), std::string::npos) << text;
  }
  fs::remove_all(dir);
}
