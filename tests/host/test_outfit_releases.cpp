// The outfit datasets as released, end to end through the `wscsl` executable: data named and
// shaped as the releases are (wscsl/testing/outfit_fixtures.hpp: Polyvore Outfits with every
// metadata field, Maryland with its test files as Han's scripts name them and Vasileva's
// same-type questions with index-valued blank positions) passes `check`, trains and evaluates; a
// broken test-split file is refused by `check`, before anything trains.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
