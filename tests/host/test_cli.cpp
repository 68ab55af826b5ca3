// The `wscsl` executable itself: exit statuses and what it prints.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

Output wscsl(const std::string& arguments) {
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
  const Output out = wscsl("check " + file);
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
  EXPECT_EQ(wscsl("check " + file).status, 0);
  const Output bad = wscsl("check " + file + " --set trainer.lr=-1 --set trainer.optimiser=sgd");
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
  const Output out = wscsl("describe condition_module/discovernet");
  EXPECT_EQ(out.status, 0);
  for (const char* option :
       {"input_dim", "num_embeddings", "embedding_dim", "projection", "g", "pairs", "temperature",
        "logits", "normalize_g_input", "train_condition_branch"})
    EXPECT_NE(out.text.find(std::string("\n  ") + option + " ("), std::string::npos) << option;
  const Output json = wscsl("describe condition_module/discovernet --json");
  EXPECT_EQ(json.status, 0);
  EXPECT_NE(json.text.find("\"name\": \"train_condition_branch\", \"type\": \"boolean\", "
                           "\"default\": \"false\""),
            std::string::npos)
      << json.text;
  const Output unknown = wscsl("describe loss/marginn");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.text.find("did you mean 'margin'?"), std::string::npos);
}

TEST(Cli, PluginsListsTypesAndUsageErrorsExitWithTwo) {
  const Output out = wscsl("plugins");
  EXPECT_EQ(out.status, 0);
  EXPECT_NE(out.text.find("provides: condition_module/discovernet"), std::string::npos);
  EXPECT_EQ(wscsl("train").status, 2);
  EXPECT_EQ(wscsl("frobnicate").status, 2);
}
