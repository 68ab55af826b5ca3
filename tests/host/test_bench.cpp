#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench/bench.hpp"
#include "bench/bench_suite.hpp"
#include "bench/bench_tables.hpp"
#include "run/results.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

using namespace wscsl;
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

TEST(Bench, ColumnsAreTheDeclaredOnesInOrderOfFirstAppearance) {
  const std::vector<DeclaredMetric> first = {{"alignment/gr_accuracy", "GR"},
                                             {"alignment/ot_converged", ""},
                                             {"retrieval/map/color", "MAP color"},
                                             {"retrieval/map/background", "MAP background"}};
  const std::vector<DeclaredMetric> second = {{"triplet_accuracy/accuracy", "triplet accuracy"},
                                              {"alignment/gr_accuracy", "GR"}};
  const std::vector<BenchColumn> columns = bench_columns({first, second});
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].heading, "GR");
  EXPECT_EQ(columns[1].heading, "MAP color");  // the declaration's order, not alphabetical
  EXPECT_EQ(columns[2].metric, "retrieval/map/background");
  EXPECT_EQ(columns[3].metric, "triplet_accuracy/accuracy");
}

TEST(Bench, EveryExampleSuiteReadsAndNamesExistingPipelines) {
  namespace fs = std::filesystem;
  std::size_t suites = 0;
  for (const auto& entry : fs::directory_iterator(WSCSL_SOURCE_DIR "/examples/suites")) {
    if (entry.path().extension() != ".toml") continue;
    ++suites;
    try {
      const Suite suite = read_suite(entry.path());
      EXPECT_FALSE(suite.methods.empty()) << entry.path();
      for (const SuiteMethod& m : suite.methods)
        EXPECT_TRUE(fs::is_regular_file(m.pipeline)) << entry.path() << ": " << m.pipeline;
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(suites, 1u);
}

TEST(Results, JsonRoundTripKeepsOrderNamesAndMissingValues) {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("wscsl_results_" + std::to_string(::getpid()));
  RunResults written;
  written.checkpoint = "runs/x/checkpoints/best.pt";
  written.epoch = 4;
  written.metrics = {{"alignment/ot_accuracy", 0.75},
                     {"retrieval/map/farbe \"grün\"", 0.5},
                     {"retrieval/map/background", NAN},
                     {"retrieval/map", 0.25}};
  write_results_json(file, written);
  const RunResults read = read_results_json(file);
  EXPECT_EQ(read.checkpoint, written.checkpoint);
  EXPECT_EQ(read.epoch, 4);
  ASSERT_EQ(read.metrics.size(), 4u);
  EXPECT_EQ(read.metrics[0], written.metrics[0]);
  EXPECT_EQ(read.metrics[1], written.metrics[1]);
  EXPECT_TRUE(std::isnan(read.metrics[2].second));
  EXPECT_EQ(read.metrics[3].first, "retrieval/map");
  EXPECT_NE(read_file(file).find("null"), std::string::npos);

  std::ofstream(file) << "{\"metrics\": [1, 2]}";
  try {
    read_results_json(file);
    FAIL() << "expected a malformed results.json to be refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), file.string() +
                                         ": not a wscsl results.json (expected an object with "
                                         "checkpoint, epoch and metrics)");
  }
  fs::remove(file);
}

TEST(Results, MetricsLinesLeadWithTheEpochAndKeepNulls) {
  const std::string line = metrics_line({{"loss", 0.5}, {"epoch", 3}, {"val/x", NAN}});
  EXPECT_EQ(line.rfind("{\"epoch\":3", 0), 0u) << line;
  EXPECT_NE(line.find("\"val/x\":null"), std::string::npos) << line;
  EXPECT_EQ(metrics_line_epoch(line), 3);
  EXPECT_EQ(metrics_line_epoch("not json"), -1);
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

TEST(Bench, CommandLineSeedsFollowTheSuitesRule) {
  EXPECT_TRUE(seed_problems({1, 2, 3}).empty());
  EXPECT_EQ(seed_problems({3, 3}), std::vector<std::string>{"seeds must be distinct"});
  EXPECT_EQ(seed_problems({-1}), std::vector<std::string>{"seeds must be >= 0, got -1"});
}
