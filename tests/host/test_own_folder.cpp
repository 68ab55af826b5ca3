// A user's own image folder through the `wscsl` executable: every fault that used to surface only
// after training is refused by `check` (and by `train` before its first step) naming the file or
// the setting; `embed` names each row's file and the condition ↔ ψ_k alignment; `bench --runs`
// tabulates runs without training them; and every command of docs/tutorial.md runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace {

namespace fs = std::filesystem;
using wscsl::test::Output;
using wscsl::test::run_command;
using wscsl::test::run_wscsl;

const char* const kColors[] = {"red", "green", "blue"};
const char* const kShapes[] = {"square", "disc"};

// A `size` × `size` picture: a shape of `color` on a gray ground, placed by `seed`.
wscsl::Image8 shape_image(int size, int color, int shape, int seed) {
  wscsl::Image8 image{size, size, 3, std::vector<std::uint8_t>(3 * size * size, 128)};
  const int half = size / 4 + seed % 3;
  const int cx = size / 2 + seed % 5 - 2, cy = size / 2 + (seed / 5) % 5 - 2;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      const int dx = x - cx, dy = y - cy;
      const bool inside = shape == 0 ? std::abs(dx) <= half && std::abs(dy) <= half
                                     : dx * dx + dy * dy <= half * half;
      if (!inside) continue;
      for (int c = 0; c < 3; ++c)
        image.row(y)[3 * x + c] = c == color ? 230 : 30;
    }
  return image;
}

// `dir`/<shape>/<n>.png and `dir`/attributes.csv (file, split, color, shape): `images` pictures,
// every tenth in val and every fifth (of the rest) in test, the others in train.
void write_shapes_folder(const fs::path& dir, int images) {
  std::string csv = "file,split,color,shape\n";
  for (int i = 0; i < images; ++i) {
    // Within each split, every colour meets every shape.
    const int color = i % 3, shape = (i / 2) % 2;
    const std::string file = fmt::format("{}/{:04}.png", kShapes[shape], i);
    fs::create_directories((dir / file).parent_path());
    wscsl::write_image_file(dir / file, shape_image(24, color, shape, i));
    const char* split = i % 10 == 0 ? "val" : (i % 5 == 0 ? "test" : "train");
    csv += fmt::format("{},{},{},{}\n", file, split, kColors[color], kShapes[shape]);
  }
  wscsl::testing::write_text(dir / "attributes.csv", csv);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A small DiscoverNet pipeline on `dir`/images; `evaluators` replaces its [[evaluators]].
fs::path write_pipeline(const fs::path& dir, const std::string& evaluators) {
  const fs::path file = dir / "p.toml";
  wscsl::testing::write_text(
      file,
      "[dataset]\ntype = \"image_folder\"\nroot = \"images\"\nattributes = "
      "\"images/attributes.csv\"\nimage_size = 16\ntrain_triplets = 64\nval_triplets = 32\n"
      "test_triplets = 64\ndecode_threads = 1\n"
      "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\nembedding_dim = 8\n"
      "[condition_module]\ntype = \"discovernet\"\npairs = 2\n"
      "[[losses]]\ntype = \"margin\"\n" +
          evaluators + "[trainer]\nepochs = 1\nbatch_size = 16\nthreads = 1\nlog_every = 1000\n");
  return file;
}

const std::string kAlignmentAndRetrieval =
    "[[evaluators]]\ntype = \"alignment\"\n"
    "[[evaluators]]\ntype = \"retrieval\"\nqueries = \"all\"\nk = [1, 5]\n";

// `check` fails with `expected` in its output, and `train` fails before it makes a run directory.
void expect_refused_before_training(const fs::path& dir, const fs::path& pipeline,
                                    const std::string& expected) {
  const Output checked = run_wscsl("check " + pipeline.string());
  EXPECT_NE(checked.status, 0) << checked.text;
  EXPECT_NE(checked.text.find(expected), std::string::npos) << checked.text;
  const fs::path run = dir / "run";
  const Output trained = run_wscsl("train " + pipeline.string() + " --run-dir " + run.string());
  EXPECT_NE(trained.status, 0) << trained.text;
  EXPECT_NE(trained.text.find(expected), std::string::npos) << trained.text;
  EXPECT_FALSE(fs::exists(run)) << "train made " << run << " though nothing could train";
}

}  // namespace

// The new user's 290-image test split with evaluator/retrieval's default 1000 queries: the run
// used to train fully and die in the final evaluation.
TEST(OwnFolder, RetrievalSettingsBeyondTheTestSplitAreRefusedAtTheirLine) {
  const wscsl::testing::ScratchDir dir("own_folder_retrieval");
  write_shapes_folder(dir.path() / "images", 120);
  const fs::path pipeline = write_pipeline(
      dir.path(), "[[evaluators]]\ntype = \"alignment\"\n[[evaluators]]\ntype = \"retrieval\"\n");
  // The error is reported at the line of the second [[evaluators]] table.
  const std::string text = read_text(pipeline);
  std::size_t line = 1, second = 0, seen = 0;
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text.compare(at, 15, "[[evaluators]]\n") == 0 && ++seen == 2) second = line;
    if (text[at] == '\n') ++line;
  }
  ASSERT_GT(second, 0u);
  const Output checked = run_wscsl("check " + pipeline.string());
  EXPECT_NE(checked.text.find(fmt::format("{}:{}:", pipeline.string(), second)), std::string::npos)
      << checked.text;
  expect_refused_before_training(
      dir.path(), pipeline,
      "evaluator 'retrieval': queries = 1000 and k = 100 need at least 1100 images in the test "
      "split, which has ");
  // "all" with small cut-offs fits: check passes and reports what each split holds.
  const fs::path fitting = write_pipeline(dir.path(), kAlignmentAndRetrieval);
  const Output ok = run_wscsl("check " + fitting.string());
  EXPECT_EQ(ok.status, 0) << ok.text;
  EXPECT_TRUE(std::regex_search(ok.text, std::regex("split +test: 64 triplets over [0-9]+ images")))
      << ok.text;
}

// A missing test image used to be reported only when the final evaluation loaded the test split.
TEST(OwnFolder, AMissingTestImageIsNamedByCheck) {
  const wscsl::testing::ScratchDir dir("own_folder_missing");
  write_shapes_folder(dir.path() / "images", 120);
  // 105 % 5 == 0 and 105 % 10 != 0: a test image; (105 / 2) % 2 == 0: a square.
  fs::remove(dir.path() / "images" / "square" / "0105.png");
  const fs::path pipeline = write_pipeline(dir.path(), kAlignmentAndRetrieval);
  expect_refused_before_training(dir.path(), pipeline, "square/0105.png");
}

// An attribute with one value used to stop training at its first step, naming no file.
TEST(OwnFolder, ASingleValuedAttributeIsNamedWithItsFile) {
  const wscsl::testing::ScratchDir dir("own_folder_single");
  write_shapes_folder(dir.path() / "images", 120);
  const fs::path csv = dir.path() / "images" / "attributes.csv";
  std::string text = read_text(csv);
  text = std::regex_replace(text, std::regex(",(square|disc)\n"), ",leather\n");
  text = std::regex_replace(text, std::regex(",shape\n"), ",material\n");
  wscsl::testing::write_text(csv, text);
  const fs::path pipeline = write_pipeline(dir.path(), kAlignmentAndRetrieval);
  expect_refused_before_training(
      dir.path(), pipeline,
      csv.string() + ":1: column 'material' has the one value 'leather' in every row");
}

// Two values overall, but one within a split: the split and the file are named.
TEST(OwnFolder, AnAttributeWithOneValueInASplitNamesTheSplitAndTheFile) {
  const wscsl::testing::ScratchDir dir("own_folder_split_value");
  write_shapes_folder(dir.path() / "images", 120);
  const fs::path csv = dir.path() / "images" / "attributes.csv";
  const std::string text =
      std::regex_replace(read_text(csv), std::regex(",test,(red|green|blue),"), ",test,red,");
  wscsl::testing::write_text(csv, text);
  const fs::path pipeline = write_pipeline(dir.path(), kAlignmentAndRetrieval);
  expect_refused_before_training(dir.path(), pipeline,
                                 csv.string() +
                                     ": the test split (its rows of column 'split'): "
                                     "cannot draw triplets for condition 'color'");
}

// embed names the file of every row and which ψ_k serves each condition; bench --runs tabulates
// finished runs and trains nothing.
TEST(OwnFolder, EmbedNamesFilesAndAlignmentAndBenchTabulatesExistingRuns) {
  const wscsl::testing::ScratchDir dir("own_folder_runs");
  write_shapes_folder(dir.path() / "images", 120);
  const fs::path pipeline = write_pipeline(dir.path(), kAlignmentAndRetrieval);
  const fs::path first = dir.path() / "first", second = dir.path() / "second";
  for (const fs::path& run : {first, second}) {
    const Output trained = run_wscsl("train " + pipeline.string() + " --run-dir " + run.string() +
                                     (run == second ? " --set trainer.seed=2" : ""));
    ASSERT_EQ(trained.status, 0) << trained.text;
  }

  const Output embedded = run_wscsl("embed " + first.string() + " --split test");
  ASSERT_EQ(embedded.status, 0) << embedded.text;
  std::smatch rows;
  ASSERT_TRUE(std::regex_search(embedded.text, rows, std::regex("test: ([0-9]+) images")))
      << embedded.text;
  const auto files = nlohmann::json::parse(read_text(first / "embeddings" / "test_files.json"));
  ASSERT_EQ(files["files"].size(), std::stoul(rows[1].str()));
  for (const auto& file : files["files"])
    EXPECT_TRUE(
        fs::exists(fs::path(files["image_root"].get<std::string>()) / file.get<std::string>()))
        << file;
  const auto alignment = nlohmann::json::parse(read_text(first / "embeddings" / "alignment.json"));
  EXPECT_EQ(alignment["conditions"], nlohmann::json::array({"color", "shape"}));
  EXPECT_EQ(alignment["fitted_on"], "val");
  for (const char* strategy : {"ot"}) {
    const auto& of = alignment["alignments"][strategy]["embedding_of_condition"];
    ASSERT_EQ(of.size(), 2u) << alignment.dump();
    for (const auto& k : of)
      EXPECT_TRUE(k.get<std::int64_t>() >= 0 && k.get<std::int64_t>() < 2) << alignment.dump();
  }

  const auto last_write = fs::last_write_time(first / "results.json");
  const Output tabulated = run_wscsl("bench --runs " + first.string() + " " + second.string() +
                                     " --output " + (dir.path() / "table").string());
  ASSERT_EQ(tabulated.status, 0) << tabulated.text;
  EXPECT_NE(tabulated.text.find("2 runs tabulated, none trained"), std::string::npos)
      << tabulated.text;
  EXPECT_EQ(tabulated.text.find("training"), std::string::npos) << tabulated.text;
  EXPECT_EQ(fs::last_write_time(first / "results.json"), last_write);
  const std::string table = read_text(dir.path() / "table" / "results.md");
  EXPECT_NE(table.find("| first | 1 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| second | 2 |"), std::string::npos) << table;
  EXPECT_NE(table.find("MAP color"), std::string::npos) << table;

  // A run directory without results is refused with the way to finish it.
  fs::create_directories(dir.path() / "unfinished");
  fs::copy_file(first / "resolved.toml", dir.path() / "unfinished" / "resolved.toml");
  const Output refused = run_wscsl("bench --runs " + (dir.path() / "unfinished").string() +
                                   " --output " + (dir.path() / "table2").string());
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.text.find("unfinished has no results.json"), std::string::npos) << refused.text;
  // The commands it names exist.
  EXPECT_NE(refused.text.find("(wscsl eval "), std::string::npos) << refused.text;
}

namespace {

// The fenced blocks of a Markdown text with the given info string, in order.
std::vector<std::string> fenced_blocks(const std::string& text, const std::string& info) {
  std::vector<std::string> blocks;
  std::istringstream lines(text);
  std::string line, block;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (!inside && line == "```" + info) {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  return blocks;
}

}  // namespace

// docs/tutorial.md on a generated folder of 300 pictures: each ```toml block whose first line is
// "# <file>" is written to that file, then every ```sh block runs (as one bash script, stopping at
// the first failing command) and every ```python block runs, in order, in one directory.
TEST(Tutorial, EveryCommandRuns) {
  const wscsl::testing::ScratchDir dir("tutorial");
  write_shapes_folder(dir.path() / "my_images", 300);
  const std::string tutorial = read_text(WSCSL_SOURCE_DIR "/docs/tutorial.md");
  std::size_t files = 0;
  for (const std::string& block : fenced_blocks(tutorial, "toml")) {
    std::smatch name;
    if (!std::regex_search(block, name, std::regex("^# ([A-Za-z0-9_.-]+\\.toml)\n"))) continue;
    wscsl::testing::write_text(dir.path() / name[1].str(), block);
    ++files;
  }
  EXPECT_EQ(files, 2u);
  const fs::path bin = fs::path(WSCSL_BINARY).parent_path();
  const std::string environment =
      fmt::format("cd '{}' && PATH='{}':\"$PATH\" WSCSL_PLUGIN_PATH='{}' ", dir.path().string(),
                  bin.string(), WSCSL_PLUGIN_DIR);
  std::size_t scripts = 0;
  for (const std::string& block : fenced_blocks(tutorial, "sh")) {
    wscsl::testing::write_text(dir.path() / "step.sh", "set -euo pipefail\n" + block);
    const Output out = run_command(environment + "bash step.sh");
    ASSERT_EQ(out.status, 0) << block << "\n" << out.text;
    ++scripts;
  }
  for (const std::string& block : fenced_blocks(tutorial, "python")) {
    wscsl::testing::write_text(dir.path() / "step.py", block);
    const Output out = run_command(environment + WSCSL_PYTHON " step.py");
    ASSERT_EQ(out.status, 0) << block << "\n" << out.text;
    ++scripts;
  }
  EXPECT_GE(scripts, 5u);
  const std::string table = read_text(dir.path() / "comparison" / "results.md");
  EXPECT_NE(table.find("| discovernet |"), std::string::npos) << table;
  EXPECT_NE(table.find("| csn |"), std::string::npos) << table;
  EXPECT_TRUE(fs::exists(dir.path() / "runs" / "discovernet" / "embeddings" / "alignment.json"));
  // The comparison page holds both runs' answers for the two queries it names.
  const std::string page = read_text(dir.path() / "comparison_page" / "index.html");
  EXPECT_NE(page.find("\"name\":\"csn\""), std::string::npos);
  EXPECT_NE(page.find("square/0005.png"), std::string::npos);
  EXPECT_NE(page.find("disc/0002.png"), std::string::npos);
}
