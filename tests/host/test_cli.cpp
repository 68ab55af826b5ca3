// The `wscsl` executable itself: exit statuses and what it prints.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "pipelines.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace {

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

Output run_wscsl(const std::string& arguments) {
  const std::string command =
      std::string("WSCSL_PLUGIN_PATH=" WSCSL_PLUGIN_DIR " " WSCSL_BINARY " ") + arguments + " 2>&1";
  Output out;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe))
    out.text += buffer.data();
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

}  // namespace

TEST(Cli, CheckPrintsEveryDiagnosticAndFails) {
  const std::string file = WSCSL_TEST_DATA_DIR "/three_errors.toml";
  const Output out = run_wscsl("check " + file);
  EXPECT_EQ(out.status, 2);
  EXPECT_NE(out.text.find(file + ":4:1: error: unknown key 'train_tripletz'"), std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find(file + ":8:9: error: [backbone] 'width' expects an integer"),
            std::string::npos);
  EXPECT_NE(out.text.find(file + ":11:8: error: unknown condition_module type \"discovernett\""),
            std::string::npos);
  EXPECT_NE(out.text.find("3 errors in the configuration; nothing was run"), std::string::npos);
}

TEST(Cli, CheckAcceptsTheDefaultPipelineAndOverrides) {
  const std::string file = WSCSL_SOURCE_DIR "/examples/pipelines/default.toml";
  EXPECT_EQ(run_wscsl("check " + file).status, 0);
  const Output bad =
      run_wscsl("check " + file + " --set trainer.lr=-1 --set trainer.optimiser=sgd");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.text.find("--set trainer.lr=-1: error: [trainer] 'lr' must be in (0, inf), got -1"),
            std::string::npos)
      << bad.text;
  EXPECT_NE(bad.text.find("--set trainer.optimiser=sgd: error: unknown key 'optimiser' in "
                          "[trainer]"),
            std::string::npos)
      << bad.text;
}

TEST(Cli, DescribeListsEveryOption) {
  const Output out = run_wscsl("describe condition_module/discovernet");
  EXPECT_EQ(out.status, 0);
  for (const char* option :
       {"input_dim", "num_embeddings", "embedding_dim", "projection", "g", "pairs", "temperature",
        "logits", "normalize_g_input", "train_condition_branch"})
    EXPECT_NE(out.text.find(std::string("\n  ") + option + " ("), std::string::npos) << option;
  const Output json = run_wscsl("describe condition_module/discovernet --json");
  EXPECT_EQ(json.status, 0);
  EXPECT_NE(json.text.find("\"name\": \"train_condition_branch\", \"type\": \"boolean\", "
                           "\"default\": \"false\""),
            std::string::npos)
      << json.text;
  const Output unknown = run_wscsl("describe loss/marginn");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.text.find("did you mean 'margin'?"), std::string::npos);
}

TEST(Cli, PluginsListsTypesAndUsageErrorsExitWithTwo) {
  const Output out = run_wscsl("plugins");
  EXPECT_EQ(out.status, 0);
  EXPECT_NE(out.text.find("provides: condition_module/discovernet"), std::string::npos);
  EXPECT_EQ(run_wscsl("train").status, 2);
  EXPECT_EQ(run_wscsl("frobnicate").status, 2);
}

TEST(Cli, TrainStopResumeAndEvaluate) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pipeline = dir / "tiny.toml";
  std::ofstream(pipeline) << wscsl::test::tiny_pipeline();
  const std::string run = (dir / "run").string();

  const Output stopped =
      run_wscsl("train " + pipeline.string() + " --run-dir " + run + " --stop-after-steps 3");
  EXPECT_EQ(stopped.status, 0) << stopped.text;
  EXPECT_NE(stopped.text.find("stopped after step 3 (epoch 1, step 3/5); resume with `wscsl "
                              "train --resume " +
                              run + "`"),
            std::string::npos)
      << stopped.text;
  EXPECT_FALSE(fs::exists(dir / "run" / "results.md"));

  const Output again = run_wscsl("train " + pipeline.string() + " --run-dir " + run);
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.text.find("already holds a run"), std::string::npos) << again.text;

  const Output resumed = run_wscsl("train --resume " + run);
  EXPECT_EQ(resumed.status, 0) << resumed.text;
  EXPECT_NE(resumed.text.find("resuming " + run + " at epoch 1, step 3 (global step 3)"),
            std::string::npos)
      << resumed.text;
  EXPECT_NE(resumed.text.find("Alignment accuracy on 'test' (fitted on 'val')"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "run" / "results.md"));

  const Output evaluated = run_wscsl("eval " + run);
  EXPECT_EQ(evaluated.status, 0) << evaluated.text;
  EXPECT_NE(evaluated.text.find("Triplet accuracy on 'test'"), std::string::npos);
  const Output last = run_wscsl("eval " + run + "/checkpoints/last.pt");
  EXPECT_EQ(last.status, 0) << last.text;
  const Output missing = run_wscsl("eval " + (dir / "nothing").string());
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.text.find("is not a run directory"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Cli, MakeTripletsAndExportWriteTheCsnLayout) {
  namespace fs = std::filesystem;
  const wscsl::testing::ScratchDir scratch("cli_triplets");
  const fs::path dir = scratch.path();
  wscsl::testing::write_image_folder(dir / "folder");
  std::ofstream(dir / "p.toml") << "[dataset]\ntype = \"image_folder\"\nroot = \"folder/images\"\n"
                                   "attributes = \"folder/attributes.csv\"\nimage_size = 8\n"
                                   "train_triplets = 8\nval_triplets = 4\ntest_triplets = 4\n"
                                   "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
                                   "[condition_module]\ntype = \"discovernet\"\n"
                                   "[[losses]]\ntype = \"margin\"\n";
  const std::string pipeline = (dir / "p.toml").string();
  const Output made = run_wscsl("make-triplets " + pipeline + " --out " + (dir / "made").string() +
                                " --train 5 --val 2 --test 3 --seed 4 --half-reverse");
  EXPECT_EQ(made.status, 0) << made.text;
  EXPECT_NE(made.text.find("color_tripletlist_train.txt (5 lines)"), std::string::npos)
      << made.text;
  EXPECT_TRUE(fs::is_regular_file(dir / "made" / "tripletlists" /
                                  "size_tripletlist_test_half_reverse.txt"));
  EXPECT_TRUE(fs::is_regular_file(dir / "made" / "filenames.json"));

  const Output exported = run_wscsl("export " + pipeline + " --out " + (dir / "exported").string() +
                                    " --set dataset.normalize=\"none\"");
  EXPECT_EQ(exported.status, 0) << exported.text;
  EXPECT_TRUE(fs::is_regular_file(dir / "exported" / "attributes.csv"));
  const Output normalized = run_wscsl("export " + pipeline + " --out " + (dir / "x").string());
  EXPECT_EQ(normalized.status, 1);
  EXPECT_NE(normalized.text.find("pixel values outside [0, 1]"), std::string::npos)
      << normalized.text;
}
