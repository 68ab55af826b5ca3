// The outfit datasets as released, end to end through the `wscsl` executable: data named and
// shaped as the releases are (wscsl/testing/outfit_fixtures.hpp: Polyvore Outfits with every
// metadata field, Maryland with its test files as Han's scripts name them and Vasileva's
// same-type questions with index-valued blank positions) passes `check`, trains and evaluates; a
// broken test-split file is refused by `check`, before anything trains.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/outfit_fixtures.hpp"

#include "run_command.hpp"

namespace fs = std::filesystem;

namespace {

using wscsl::test::Output;
using wscsl::test::run_wscsl;

// A small type-aware model scored by both outfit tasks; `dataset` is the [dataset] table's body.
std::string pipeline(const std::string& dataset, bool validate) {
  return fmt::format(
      "[dataset]\n{}image_size = 16\ndecode_threads = 1\n\n"
      "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 2\nembedding_dim = 8\n\n"
      "[condition_module]\ntype = \"type_aware\"\n\n"
      "[[losses]]\ntype = \"margin\"\n\n"
      "[[evaluators]]\ntype = \"outfit_compatibility\"\n\n"
      "[[evaluators]]\ntype = \"fill_in_the_blank\"\n\n"
      "[trainer]\nepochs = 1\nbatch_size = 4\ndevice = \"cpu\"\nvalidate = {}\n",
      dataset, validate);
}

void expect_checks_trains_and_evaluates(const fs::path& file, const fs::path& run) {
  const Output check = run_wscsl("check " + file.string());
  ASSERT_EQ(check.status, 0) << check.text;
  const Output train = run_wscsl("train " + file.string() + " --run-dir " + run.string());
  ASSERT_EQ(train.status, 0) << train.text;
  EXPECT_NE(train.text.find("fill_in_the_blank"), std::string::npos) << train.text;
  EXPECT_NE(train.text.find("outfit_compatibility"), std::string::npos) << train.text;
  EXPECT_TRUE(fs::exists(run / "results.json"));
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream(file) << text;
}

// `check` refuses the pipeline with `expected`, exit status 2.
void expect_check_refuses(const fs::path& pipeline_file, const std::string& expected) {
  const Output check = run_wscsl("check " + pipeline_file.string());
  EXPECT_EQ(check.status, 2) << check.text;
  EXPECT_NE(check.text.find(expected), std::string::npos) << check.text;
}

}  // namespace

TEST(OutfitReleases, MarylandAsItsAuthorsScriptsReadItChecksTrainsAndEvaluates) {
  wscsl::testing::ScratchDir scratch("maryland_release");
  const fs::path data = scratch.path() / "maryland";
  wscsl::testing::write_maryland_polyvore(data, wscsl::testing::MarylandSpelling::Scripts);
  const fs::path file = scratch.path() / "maryland.toml";
  std::ofstream(file) << pipeline(fmt::format("type = \"maryland_polyvore\"\nroot = \"{}\"\n"
                                              "category_types = \"category_types.csv\"\n",
                                              data.string()),
                                  false);
  expect_checks_trains_and_evaluates(file, scratch.path() / "run");

  // Vasileva's same-type files: blank_position is the blank item's index.
  const fs::path same_type = scratch.path() / "same_type.toml";
  std::ofstream(same_type) << pipeline(
      fmt::format("type = \"maryland_polyvore\"\nroot = \"{}\"\n"
                  "category_types = \"category_types.csv\"\n"
                  "same_type_compatibility = \"same_type/compatibility_test.txt\"\n"
                  "same_type_fitb = \"same_type/fill_in_blank_test.json\"\n",
                  data.string()),
      false);
  expect_checks_trains_and_evaluates(same_type, scratch.path() / "run_same_type");

  // Han's validation split has no outfit tasks: validating with the outfit evaluators is refused
  // by `check`, with the way out, instead of failing after the first epoch.
  const fs::path validating = scratch.path() / "validating.toml";
  std::ofstream(validating) << pipeline(fmt::format("type = \"maryland_polyvore\"\nroot = \"{}\"\n"
                                                    "category_types = \"category_types.csv\"\n",
                                                    data.string()),
                                        true);
  const Output refused = run_wscsl("check " + validating.string());
  EXPECT_EQ(refused.status, 2) << refused.text;
  for (const char* expected : {"evaluator 'outfit_compatibility' needs compatibility lines of both "
                               "labels in the val split, and dataset 'maryland_polyvore'",
                               "note: set [trainer] validate = false, or remove the evaluator "
                               "'outfit_compatibility'"})
    EXPECT_NE(refused.text.find(expected), std::string::npos) << refused.text;

  // A broken test-split file: `check` refuses it, naming the file and the line.
  std::ofstream(data / "fashion_compatibility_prediction.txt", std::ios::app) << "yes a b\n";
  const Output check = run_wscsl("check " + file.string());
  EXPECT_EQ(check.status, 2) << check.text;
  EXPECT_NE(check.text.find((data / "fashion_compatibility_prediction.txt").string() +
                            ":9: the label is 'yes'; expected 1 (compatible) or 0 (not)"),
            std::string::npos)
      << check.text;
}

TEST(OutfitReleases, PolyvoreOutfitsChecksTrainsAndEvaluatesAndABrokenTestFileIsRefusedByCheck) {
  wscsl::testing::ScratchDir scratch("polyvore_release");
  const fs::path data = scratch.path() / "polyvore_outfits";
  wscsl::testing::write_polyvore_outfits(data, "nondisjoint", 0);
  const fs::path file = scratch.path() / "polyvore.toml";
  std::ofstream(file) << pipeline(
      fmt::format("type = \"polyvore_outfits\"\nroot = \"{}\"\n", data.string()), true);
  expect_checks_trains_and_evaluates(file, scratch.path() / "run");

  std::ofstream(data / "nondisjoint" / "fill_in_blank_test.json") << "[{\"question\": []}]";
  const Output check = run_wscsl("check " + file.string());
  EXPECT_EQ(check.status, 2) << check.text;
  EXPECT_NE(check.text.find((data / "nondisjoint" / "fill_in_blank_test.json").string() +
                            ": question 0: 'question' is a list of 0 entries; expected a list of "
                            "at least one item name"),
            std::string::npos)
      << check.text;
}

// A test file that cannot give its evaluator's metric used to pass `check`, train every epoch and
// stop in the final evaluation: an empty compatibility file, one of compatible lines only, an
// empty list of questions. `check` refuses each, naming the file, and `train` before its first
// step.
TEST(OutfitReleases, TestFilesThatCannotGiveTheirMetricAreRefusedBeforeTraining) {
  wscsl::testing::ScratchDir scratch("polyvore_unusable");
  const fs::path data = scratch.path() / "polyvore_outfits";
  wscsl::testing::write_polyvore_outfits(data, "nondisjoint", 0);
  const fs::path file = scratch.path() / "polyvore.toml";
  std::ofstream(file) << pipeline(
      fmt::format("type = \"polyvore_outfits\"\nroot = \"{}\"\n", data.string()), false);
  const fs::path compatibility = data / "nondisjoint" / "compatibility_test.txt";
  const fs::path blanks = data / "nondisjoint" / "fill_in_blank_test.json";
  const std::string lines = read_file(compatibility);
  const std::string questions = read_file(blanks);

  write_file(compatibility, "");
  const std::string empty = fmt::format(
      "evaluator 'outfit_compatibility' needs compatibility lines of both labels in the test "
      "split, and it holds 0 compatible and 0 incompatible lines (read from {})",
      compatibility.string());
  expect_check_refuses(file, empty);
  const fs::path run = scratch.path() / "run";
  const Output train = run_wscsl("train " + file.string() + " --run-dir " + run.string());
  EXPECT_EQ(train.status, 2) << train.text;
  EXPECT_NE(train.text.find(empty), std::string::npos) << train.text;
  EXPECT_FALSE(fs::exists(run)) << "train made " << run << " though it could not evaluate";

  std::string compatible_only;
  std::int64_t compatible = 0;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("1 ", 0) == 0) compatible_only += line + "\n", ++compatible;
  ASSERT_GT(compatible, 0);
  write_file(compatibility, compatible_only);
  expect_check_refuses(
      file, fmt::format("evaluator 'outfit_compatibility' needs compatibility lines of both labels "
                        "in the test split, and it holds {} compatible and 0 incompatible lines "
                        "(read from {})",
                        compatible, compatibility.string()));
  write_file(compatibility, lines);

  write_file(blanks, "[]");
  expect_check_refuses(file, fmt::format("evaluator 'fill_in_the_blank' needs fill-in-the-blank "
                                         "questions in the test split, and it holds none (read "
                                         "from {})",
                                         blanks.string()));
  write_file(blanks, questions);
  const Output check = run_wscsl("check " + file.string());
  EXPECT_EQ(check.status, 0) << check.text;
}

// Bad compatibility lines skipped under max_bad_rows are told, with their count and the first.
TEST(OutfitReleases, SkippedCompatibilityLinesAreWarnedAbout) {
  wscsl::testing::ScratchDir scratch("outfit_bad_rows");
  const fs::path polyvore = scratch.path() / "polyvore_outfits";
  wscsl::testing::write_polyvore_outfits(polyvore, "nondisjoint", 0);
  const fs::path maryland = scratch.path() / "maryland";
  wscsl::testing::write_maryland_polyvore(maryland, wscsl::testing::MarylandSpelling::Scripts);
  const std::string polyvore_table = fmt::format(
      "type = \"polyvore_outfits\"\nroot = \"{}\"\nmax_bad_rows = 5\n", polyvore.string());
  const std::string maryland_table = fmt::format(
      "type = \"maryland_polyvore\"\nroot = \"{}\"\ncategory_types = \"category_types.csv\"\n"
      "max_bad_rows = 5\n",
      maryland.string());
  for (const auto& [table, compatibility] :
       {std::pair{polyvore_table, polyvore / "nondisjoint" / "compatibility_test.txt"},
        std::pair{maryland_table, maryland / "fashion_compatibility_prediction.txt"}}) {
    SCOPED_TRACE(compatibility.string());
    std::int64_t line = 0;
    {
      std::istringstream in(read_file(compatibility));
      for (std::string l; std::getline(in, l);)
        ++line;
    }
    std::ofstream(compatibility, std::ios::app) << "yes a b\n1 only\n";
    const fs::path file = scratch.path() / "pipeline.toml";
    std::ofstream(file) << pipeline(table, false);
    const Output check = run_wscsl("check " + file.string());
    EXPECT_EQ(check.status, 0) << check.text;
    EXPECT_NE(
        check.text.find(fmt::format("skipped 2 bad rows of {} (max_bad_rows = 5); the first: "
                                    "{}:{}: the label is 'yes'",
                                    compatibility.string(), compatibility.string(), line + 1)),
        std::string::npos)
        << check.text;
  }
}
