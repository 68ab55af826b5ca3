// The `wscsl` executable itself: exit statuses and what it prints.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <nlohmann/json.hpp>

#include "distributed/communicator.hpp"
#include "pipelines.hpp"
#include "run_command.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/plugin/toolchain.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace {

using wscsl::test::Output;
using wscsl::test::run_command;
using wscsl::test::run_wscsl;

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) ++n;
  return n;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An image folder in dir/folder and a small DiscoverNet pipeline on it, dir/p.toml, whose path it
// returns; `dataset` adds keys to the [dataset] table, `tables` follows the loss.
std::filesystem::path write_image_folder_pipeline(const std::filesystem::path& dir,
                                                  const std::string& dataset = "",
                                                  const std::string& tables = "") {
  wscsl::testing::write_image_folder(dir / "folder");
  std::ofstream(dir / "p.toml") << "[dataset]\ntype = \"image_folder\"\nroot = \"folder/images\"\n"
                                   "attributes = \"folder/attributes.csv\"\nimage_size = 8\n"
                                << dataset
                                << "train_triplets = 8\nval_triplets = 4\ntest_triplets = 4\n"
                                   "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
                                   "[condition_module]\ntype = \"discovernet\"\n"
                                   "[[losses]]\ntype = \"margin\"\n"
                                << tables;
  return dir / "p.toml";
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

namespace {

// Checks every pipeline of a corpus directory: each holds one mistake, which `check` reports
// once, with the text of its "# expect:" line, at the line marked "# <- error" — or at the
// line:column of its "# expect-at:" line, where a mark cannot be written (an unterminated array,
// say). Returns how many pipelines it checked.
std::size_t check_corpus(const std::filesystem::path& corpus, const std::string& plugin_path) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    const std::string file = entry.path().string();
    std::ifstream in(file, std::ios::binary);
    std::string line, expect, at;
    std::size_t number = 0, marked = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.rfind("# expect: ", 0) == 0) expect = line.substr(10);
      if (line.rfind("# expect-at: ", 0) == 0) at = line.substr(13);
      if (line.find("# <- error") != std::string::npos) marked = number;
    }
    EXPECT_FALSE(expect.empty()) << file << " has no '# expect:' line";
    EXPECT_TRUE(marked != 0 || !at.empty())
        << file << " marks no line with '# <- error' and has no '# expect-at:'";
    const Output out = run_wscsl(plugin_path + "check " + file);
    EXPECT_EQ(out.status, 2) << file << "\n" << out.text;
    std::size_t errors = 0;
    for (std::size_t pos = out.text.find(": error: "); pos != std::string::npos;
         pos = out.text.find(": error: ", pos + 1))
      ++errors;
    EXPECT_EQ(errors, 1u) << file << "\n" << out.text;
    const std::string where = file + ":" + (at.empty() ? std::to_string(marked) : at) + ":";
    EXPECT_NE(out.text.find(where), std::string::npos)
        << file << " expected the error at " << where << "\n"
        << out.text;
    EXPECT_NE(out.text.find(expect), std::string::npos) << file << "\n" << out.text;
    ++files;
  }
  return files;
}

}  // namespace

// Each pipeline of tests/pipelines/contracts breaks one contract between its components.
TEST(Cli, EveryBrokenContractIsOneDiagnosticAtItsTable) {
  EXPECT_GE(check_corpus(WSCSL_SOURCE_DIR "/tests/pipelines/contracts",
                         "--plugin-path " WSCSL_CONTRACT_FIXTURES " "),
            12u);
}

// Each pipeline of tests/pipelines/malformed has one mistake of syntax, type, range,
// non-finite value, unknown key or plugin, enumeration spelling, nesting or encoding.
TEST(Cli, EveryMalformedPipelineIsOneDiagnosticAtItsPlace) {
  EXPECT_GE(check_corpus(WSCSL_SOURCE_DIR "/tests/pipelines/malformed", ""), 270u);
}

// An option made inert by a setting that is commonly switched for a moment is a warning: `check`
// shows it at the option's line and passes.
TEST(Cli, CheckShowsAWarningAtItsLineAndPasses) {
  const std::string file = WSCSL_SOURCE_DIR "/examples/pipelines/default.toml";
  const Output out = run_wscsl("check " + file + " --set trainer.validate=false");
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find(file + ":40:17: warning: [trainer] 'select_metric' = "
                                 "\"alignment/ot_accuracy\" has no effect: it is read only with "
                                 "validate = true"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("pipeline is valid"), std::string::npos) << out.text;
}

TEST(Cli, CheckAcceptsTheDefaultPipelineAndOverrides) {
  const std::string file = WSCSL_SOURCE_DIR "/examples/pipelines/default.toml";
  EXPECT_EQ(run_wscsl("check " + file).status, 0);
  const Output bad =
      run_wscsl("check " + file + " --set trainer.lr=-1 --set trainer.optimiser=sgd");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.text.find("--set trainer.lr=-1: error: [trainer] 'lr' must be in (0, "
                          "3.4028234663852886e+38], got -1"),
            std::string::npos)
      << bad.text;
  EXPECT_NE(bad.text.find("--set trainer.optimiser=sgd: error: unknown key 'optimiser' in "
                          "[trainer]"),
            std::string::npos)
      << bad.text;
}

namespace {

// The line `wscsl: error: …` of a command's output.
std::string error_line(const std::string& text) {
  const std::size_t at = text.find("wscsl: error: ");
  return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
}

}  // namespace

// A third-party plugin whose φ, distances() or weights() has the wrong shape is refused by
// `check`, before anything trains, with the sentence `train` gives at its first step (with the
// probe's 4 triplets for the batch's 32). The run directory such a `train` leaves takes a rerun
// once the plugin is right.
TEST(Cli, CheckProbesEveryComponentWithTheSentenceTrainGives) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_probe_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string pipeline = (dir / "misshaped.toml").string();
  std::ofstream(pipeline) << R"([dataset]
type = "fashion_crb"
train_items = 256
val_items = 96
test_items = 96
train_triplets = 64
val_triplets = 64
test_triplets = 64

[backbone]
type = "misshaped_backbone"

[condition_module]
type = "misshaped_module"

[[losses]]
type = "margin"

[[evaluators]]
type = "triplet_accuracy"

[trainer]
epochs = 1
batch_size = 32
)";
  const std::string wscsl = "--plugin-path " WSCSL_MISSHAPED_FIXTURE " ";
  const Output right = run_wscsl(wscsl + "check " + pipeline);
  EXPECT_EQ(right.status, 0) << right.text;
  // φ and ψ of the 12 items of the 4 triplets, weights of the 4 triplets.
  EXPECT_NE(
      right.text.find("  probed            φ Float [12, 8], ψ Float [12, 4, 8], weights Float "
                      "[4, 4], loss 'margin', the evaluators' inputs (4 triplets, "),
      std::string::npos)
      << right.text;

  const std::string run = (dir / "run").string();
  const std::map<std::string, std::string> mistakes = {
      {"backbone.mistake=phi",
       "broke its contract: the embedding has shape [4, 8, 1], expected "
       "[4, 8]"},
      {"condition_module.mistake=distances",
       "broke its contract: distances has shape [4], expected [4, 4]"},
      {"condition_module.mistake=weights",
       "broke its contract: weights has shape [4], expected [4, 4]"}};
  for (const auto& [mistake, sentence] : mistakes) {
    const Output checked = run_wscsl(wscsl + "check " + pipeline + " --set " + mistake);
    EXPECT_EQ(checked.status, 1) << mistake << "\n" << checked.text;
    EXPECT_NE(checked.text.find(sentence), std::string::npos) << mistake << "\n" << checked.text;
    const Output trained =
        run_wscsl(wscsl + "train " + pipeline + " --set " + mistake + " --run-dir " + run);
    EXPECT_EQ(trained.status, 1) << mistake << "\n" << trained.text;
    const std::string at_check =
        std::regex_replace(error_line(checked.text), std::regex("\\[4\\b"), "[32");
    EXPECT_FALSE(at_check.empty()) << checked.text;
    EXPECT_EQ(at_check, error_line(trained.text)) << mistake;
  }
  // Components too large to run at check time are left out; later ones get random tensors.
  const Output skipped =
      run_wscsl(wscsl + "check " + pipeline + " --set backbone.mistake=phi --skip-probe backbone");
  EXPECT_EQ(skipped.status, 0) << skipped.text;
  EXPECT_NE(skipped.text.find("φ skipped (random [12, 8]), ψ Float [12, 4, 8]"), std::string::npos)
      << skipped.text;
  EXPECT_EQ(run_wscsl(wscsl + "check " + pipeline + " --skip-probe dataset").status, 2);

  // The failed runs wrote no checkpoint: the directory trains again, and is then a run to resume.
  const Output rerun = run_wscsl(wscsl + "train " + pipeline + " --run-dir " + run);
  EXPECT_EQ(rerun.status, 0) << rerun.text;
  EXPECT_NE(rerun.text.find(run + " stopped before its first checkpoint: training it again from "
                                  "step 0"),
            std::string::npos)
      << rerun.text;
  const Output again = run_wscsl(wscsl + "train " + pipeline + " --run-dir " + run);
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.text.find("already holds a run; resume it with `wscsl train --resume " + run),
            std::string::npos)
      << again.text;
  fs::remove_all(dir);
}

TEST(Cli, DescribeListsEveryOption) {
  const Output out = run_wscsl("describe condition_module/discovernet");
  EXPECT_EQ(out.status, 0);
  for (const char* option :
       {"input_dim", "num_embeddings", "embedding_dim", "projection", "g", "pairs", "temperature",
        "logits", "normalize_g_input", "train_condition_branch"})
    EXPECT_NE(out.text.find(std::string("\n  ") + option + " ("), std::string::npos) << option;
  EXPECT_NE(out.text.find("\n  type (string, required)\n"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("\n  pairs (integer, default "), std::string::npos) << out.text;
  const Output json = run_wscsl("describe condition_module/discovernet --json");
  EXPECT_EQ(json.status, 0);
  const nlohmann::json described = nlohmann::json::parse(json.text);
  bool found = false;
  for (const nlohmann::json& option : described.at("options"))
    if (option.at("name") == "train_condition_branch") {
      found = true;
      EXPECT_EQ(option.at("type"), "boolean");
      EXPECT_EQ(option.at("default"), "false");
    }
  EXPECT_TRUE(found) << json.text;
  const Output text = run_wscsl("describe evaluator/alignment");
  EXPECT_NE(
      text.text.find("contract:\n  provides the alignment of embeddings with conditions (ot)"),
      std::string::npos)
      << text.text;
  const nlohmann::json alignment =
      nlohmann::json::parse(run_wscsl("describe evaluator/alignment --json").text);
  EXPECT_EQ(alignment.at("contract").at("provides").at(0).at("resource"), "alignment");
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
  EXPECT_TRUE(fs::exists(dir / "run" / "curves.png"));

  const Output evaluated = run_wscsl("eval " + run);
  EXPECT_EQ(evaluated.status, 0) << evaluated.text;
  EXPECT_NE(evaluated.text.find("Triplet accuracy on 'test'"), std::string::npos);
  const Output last = run_wscsl("eval " + run + "/checkpoints/last.pt");
  EXPECT_EQ(last.status, 0) << last.text;
  const Output embedded = run_wscsl("embed " + run + " --split val --split test --output " +
                                    (dir / "embeddings").string());
  EXPECT_EQ(embedded.status, 0) << embedded.text;
  for (const char* split : {"val", "test"})
    for (const char* what : {"phi", "psi", "image_ids", "factors", "triplets", "conditions"})
      EXPECT_TRUE(fs::exists(dir / "embeddings" / (std::string(split) + "_" + what + ".npy")))
          << split << " " << what;
  // The φ file of the test split: 8-D float32 rows, one per image the split's triplets use.
  const std::string phi = read_text(dir / "embeddings" / "test_phi.npy");
  const std::size_t header =
      10 + static_cast<unsigned char>(phi[8]) + 256 * static_cast<unsigned char>(phi[9]);
  EXPECT_EQ(phi.rfind("\x93NUMPY\x01", 0), 0u);
  EXPECT_EQ(header % 64, 0u);
  const std::size_t open = phi.find("'shape': ("), comma = phi.find(", 8)", open);
  ASSERT_NE(comma, std::string::npos) << phi.substr(0, header);
  const std::size_t rows = std::stoul(phi.substr(open + 10, comma - open - 10));
  EXPECT_GT(rows, 0u);
  EXPECT_EQ(phi.size(), header + rows * 8 * 4);
  EXPECT_EQ(read_text(dir / "embeddings" / "conditions.txt"),
            "category\ncolor\nrotation\nbackground\n");

  // The trained weights, as Python's torch.load reads them, under the model's names: with
  // weights_only=True, PyTorch 2.6's default, which reads only plain containers and tensors.
  const fs::path weights = dir / "weights.pt";
  const Output exported =
      run_wscsl("export-weights " + run + " --out " + weights.string() + " --list");
  EXPECT_EQ(exported.status, 0) << exported.text;
  EXPECT_NE(exported.text.find("  backbone."), std::string::npos) << exported.text;
  EXPECT_NE(exported.text.find("  condition_module."), std::string::npos) << exported.text;
  const Output python =
      run_command(WSCSL_PYTHON
                  " -c \"import sys, torch; d = torch.load(sys.argv[1], weights_only=True); "
                  "assert all(torch.is_tensor(v) and torch.isfinite(v).all() for v in d.values()); "
                  "print(len(d), sorted({k.split('.')[0] for k in d}))\" " +
                  weights.string());
  EXPECT_EQ(python.status, 0) << python.text;
  const std::size_t listed = count_lines_starting(exported.text, "  ");
  EXPECT_EQ(python.text, std::to_string(listed) + " ['backbone', 'condition_module']\n");
  // A run whose [trainer] names a GPU this machine lacks: eval refuses it, and export-weights,
  // which copies tensors on the CPU, still writes them.
  const fs::path resolved = fs::path(run) / "resolved.toml";
  std::string text = read_text(resolved);
  const std::size_t device = text.find("\ndevice = ", text.find("[trainer]"));
  ASSERT_NE(device, std::string::npos) << text;
  text.replace(device, text.find('\n', device + 1) - device, "\ndevice = \"cuda:7\"");
  std::ofstream(resolved, std::ios::trunc) << text;
  const Output on_gpu = run_wscsl("eval " + run);
  EXPECT_EQ(on_gpu.status, 2) << on_gpu.text;
  EXPECT_NE(on_gpu.text.find("\"cuda:7\""), std::string::npos) << on_gpu.text;
  const Output anywhere = run_wscsl("export-weights " + run + " --out " + weights.string());
  EXPECT_EQ(anywhere.status, 0) << anywhere.text;

  const Output no_split = run_wscsl("embed " + run + " --split tset");
  EXPECT_EQ(no_split.status, 2);
  EXPECT_NE(no_split.text.find("tset not in {train,val,test}"), std::string::npos) << no_split.text;

  const Output missing = run_wscsl("eval " + (dir / "nothing").string());
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.text.find("is not a run directory"), std::string::npos);
  fs::remove_all(dir);
}

// trainer.device is checked by `check`, printed on the run line and kept in the provenance.
TEST(Cli, TheDeviceIsCheckedPrintedAndRecorded) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_device_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pipeline = dir / "tiny.toml";
  std::ofstream(pipeline) << wscsl::test::tiny_pipeline();
  const bool gpu = torch::cuda::is_available();

  for (const auto& [setting, device] :
       {std::pair<std::string, std::string>{"cpu", "cpu"}, {"auto", gpu ? "cuda" : "cpu"}}) {
    const std::string run = (dir / ("run_" + setting)).string();
    const Output trained = run_wscsl("train " + pipeline.string() + " --run-dir " + run +
                                     " --stop-after-steps 2 --set trainer.device=" + setting);
    EXPECT_EQ(trained.status, 0) << trained.text;
    EXPECT_NE(trained.text.find("run " + run + " — 2 threads, seed 3, device " + device + "\n"),
              std::string::npos)
        << trained.text;
    const wscsl::ConfigNode resolved = wscsl::load_toml_file(fs::path(run) / "resolved.toml");
    EXPECT_EQ(resolved.find("trainer")->find("device")->as_string(), setting);
    EXPECT_EQ(resolved.find("provenance")->find("device")->as_string(), device);
    EXPECT_EQ(resolved.find("provenance")->find("libtorch")->as_string(), WSCSL_TORCH_IDENTITY);
  }

  const Output misspelled = run_wscsl("check " + pipeline.string() + " --set trainer.device=gpu");
  EXPECT_EQ(misspelled.status, 2);
  EXPECT_NE(misspelled.text.find("--set trainer.device=gpu: error: [trainer] 'device' must be "
                                 "\"auto\", \"cpu\", \"cuda\" or \"cuda:N\", got \"gpu\""),
            std::string::npos)
      << misspelled.text;

  // Without a GPU, "cuda" and "cuda:N" are one sentence from `check`: with a CUDA LibTorch that no
  // GPU is visible, with a CPU-only one that it has no CUDA.
  const std::vector<std::string> unavailable =
      gpu ? std::vector<std::string>{} : std::vector<std::string>{"cuda", "cuda:1"};
  for (const std::string& spelled : unavailable) {
    std::string text = wscsl::test::tiny_pipeline();
    text.replace(text.find("threads = 2"), 11, "threads = 2\ndevice = \"" + spelled + "\"");
    const fs::path file = dir / "cuda.toml";
    std::ofstream(file) << text;
    const auto line = std::count(text.begin(), text.begin() + text.find("device"), '\n') + 1;
    const std::string why =
        WSCSL_TORCH_CUDA ? "needs a GPU, and none is visible; use \"cpu\" or \"auto\""
                         : "needs CUDA, and this wscsl's LibTorch (" WSCSL_TORCH_IDENTITY
                           ") has no CUDA support; use \"cpu\" or \"auto\", or build against a "
                           "CUDA LibTorch (docs/distributed.md)";
    const Output cuda = run_wscsl("check " + file.string());
    EXPECT_EQ(cuda.status, 2) << cuda.text;
    EXPECT_EQ(count_lines_starting(cuda.text, file.string() + ":"), 1u) << cuda.text;
    EXPECT_NE(cuda.text.find(file.string() + ":" + std::to_string(line) +
                             ":10: error: [trainer] 'device': \"" + spelled + "\" " + why + "\n"),
              std::string::npos)
        << cuda.text;
  }
  // NCCL needs a build with it and a model on a GPU: one sentence where either is missing.
  const Output nccl = run_wscsl("check " + pipeline.string() +
                                " --set trainer.device=cpu --set trainer.collective_backend=nccl");
  EXPECT_EQ(nccl.status, 2) << nccl.text;
  EXPECT_EQ(count_lines_starting(nccl.text, "--set trainer.collective_backend=nccl: error:"), 1u)
      << nccl.text;
  EXPECT_NE(nccl.text.find(wscsl::host::nccl_built_in()
                               ? "'collective_backend': \"nccl\" reduces tensors on a GPU, and the "
                                 "model trains on the CPU here"
                               : "'collective_backend': \"nccl\" needs a wscsl built with NCCL"),
            std::string::npos)
      << nccl.text;
  fs::remove_all(dir);
  if (gpu) GTEST_SKIP() << "a GPU is visible, so \"cuda\" is a valid device here";
}

// A run killed before its first checkpoint resumes from step 0; a run directory has one writer.
TEST(Cli, ResumeFromNothingAndOneWriterPerRun) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_writer_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pipeline = dir / "tiny.toml";
  std::ofstream(pipeline) << wscsl::test::tiny_pipeline();
  const std::string run = (dir / "run").string();
  ASSERT_EQ(run_wscsl("train " + pipeline.string() + " --run-dir " + run + " --stop-after-steps 2")
                .status,
            0);
  fs::remove(dir / "run" / "checkpoints" / "last.pt");  // as if killed before its first one
  const Output restarted = run_wscsl("train --resume " + run + " --set trainer.epochs=1");
  EXPECT_EQ(restarted.status, 0) << restarted.text;
  EXPECT_NE(restarted.text.find(run + " stopped before its first checkpoint: training it again "
                                      "from step 0"),
            std::string::npos)
      << restarted.text;
  EXPECT_TRUE(fs::exists(dir / "run" / "results.json"));

  // While another process holds the run, a second writer is refused, naming it.
  const int fd = ::open((dir / "run" / "lock").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string me = std::to_string(::getpid());
  ASSERT_EQ(::ftruncate(fd, 0), 0);  // the last wscsl's PID may be longer than ours
  ASSERT_EQ(::pwrite(fd, me.data(), me.size(), 0), static_cast<ssize_t>(me.size()));
  for (const std::string& command : {"eval " + run, "train --resume " + run, "embed " + run}) {
    const Output refused = run_wscsl(command);
    EXPECT_EQ(refused.status, 1) << command << "\n" << refused.text;
    EXPECT_NE(refused.text.find(run + " is being written by another wscsl (process " + me + ")"),
              std::string::npos)
        << refused.text;
  }
  ::close(fd);
  EXPECT_EQ(run_wscsl("eval " + run).status, 0);
  fs::remove_all(dir);
}

// A restart belongs to its job: torchrun's (TORCHELASTIC_RUN_ID) and a requeued Slurm job's
// (SLURM_JOB_ID), emulated by their variables for one process. Another job's restart into the run
// directory is refused in one sentence naming both jobs and the resume command, and changes
// nothing; the printed command takes the run over; the job's own restart continues it.
TEST(Cli, ARestartContinuesOnlyItsOwnJobsRun) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_job_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pipeline = dir / "tiny.toml";
  std::ofstream(pipeline) << wscsl::test::tiny_pipeline();
  const auto torchrun = [](const std::string& run_id, int restart) {
    return "RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 GROUP_RANK=0 GROUP_WORLD_SIZE=1 "
           "ROLE_RANK=0 ROLE_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 "
           "TORCHELASTIC_RUN_ID=" +
           run_id + " TORCHELASTIC_RESTART_COUNT=" + std::to_string(restart) +
           " TORCHELASTIC_MAX_RESTARTS=3 TORCHELASTIC_USE_AGENT_STORE=False ";
  };
  const auto slurm = [](int job, int restart) {
    return "SLURM_JOB_ID=" + std::to_string(job) +
           " SLURM_RESTART_COUNT=" + std::to_string(restart) +
           " SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_LOCALID=0 SLURM_NODEID=0 "
           "SLURM_NNODES=1 SLURM_STEP_TASKS_PER_NODE=1 SLURM_JOB_NODELIST=localhost "
           "MASTER_PORT=29500 ";
  };
  const auto wscsl = [](const std::string& environment, const std::string& arguments) {
    return run_command(environment + "WSCSL_PLUGIN_PATH=" WSCSL_PLUGIN_DIR " " WSCSL_BINARY " " +
                       arguments);
  };
  const auto text_of = [](const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string run = (dir / "run").string();
  const std::string train = "train " + pipeline.string() + " --run-dir " + run;
  const Output first = wscsl(torchrun("jobA", 0), train + " --stop-after-steps 2");
  ASSERT_EQ(first.status, 0) << first.text;
  const nlohmann::json recorded = nlohmann::json::parse(text_of(dir / "run" / "job.json"));
  EXPECT_EQ(recorded["job"], "torchrun run 'jobA'");
  EXPECT_EQ(recorded["launcher"], "torchrun");
  const std::string steps = text_of(dir / "run" / "steps.tsv");

  // Job B's restart, its --run-dir holding job A's run: refused, the run unchanged.
  const Output other = wscsl(torchrun("jobB", 1), train);
  EXPECT_EQ(other.status, 1) << other.text;
  const std::string resume = "torchrun … --no_python wscsl train --resume " + run;
  EXPECT_NE(other.text.find(run +
                            " holds a run of torchrun run 'jobA', not of this job "
                            "(torchrun run 'jobB'), which torchrun started again: resume it "
                            "with `" +
                            resume + "` or give this job another --run-dir"),
            std::string::npos)
      << other.text;
  EXPECT_EQ(text_of(dir / "run" / "steps.tsv"), steps);
  // torchrun's default run id names no job: the agent (the worker's parent) tells them apart.
  const Output unnamed = wscsl(torchrun("none", 1), train);
  EXPECT_EQ(unnamed.status, 1) << unnamed.text;
  EXPECT_NE(unnamed.text.find("not of this job (torchrun run 'none' of the agent process "),
            std::string::npos)
      << unnamed.text;

  // The printed command (torchrun's options aside) takes the run over for job B; B's restart
  // then continues it.
  const Output taken =
      wscsl(torchrun("jobB", 0), "train --resume " + run + " --stop-after-steps 3");
  ASSERT_EQ(taken.status, 0) << taken.text;
  EXPECT_EQ(nlohmann::json::parse(text_of(dir / "run" / "job.json"))["job"], "torchrun run 'jobB'");
  const Output restarted = wscsl(torchrun("jobB", 1), train + " --stop-after-steps 4");
  EXPECT_EQ(restarted.status, 0) << restarted.text;
  EXPECT_NE(restarted.text.find("torchrun restarted the job (restart 1 of 3): continuing " + run),
            std::string::npos)
      << restarted.text;

  // A requeued Slurm job continues its own run, and is refused another job's.
  const std::string slurm_run = (dir / "slurm").string();
  const std::string slurm_train = "train " + pipeline.string() + " --run-dir " + slurm_run;
  ASSERT_EQ(wscsl(slurm(7, 0), slurm_train + " --stop-after-steps 2").status, 0);
  const Output requeued_other = wscsl(slurm(8, 1), slurm_train);
  EXPECT_EQ(requeued_other.status, 1) << requeued_other.text;
  EXPECT_NE(requeued_other.text.find(slurm_run +
                                     " holds a run of Slurm job 7, not of this job "
                                     "(Slurm job 8), which srun started again: resume "
                                     "it with `srun wscsl train --resume " +
                                     slurm_run + "` or give this job another --run-dir"),
            std::string::npos)
      << requeued_other.text;
  const Output requeued = wscsl(slurm(7, 1), slurm_train + " --stop-after-steps 4");
  EXPECT_EQ(requeued.status, 0) << requeued.text;
  EXPECT_NE(requeued.text.find("Slurm requeued the job (restart 1): continuing " + slurm_run),
            std::string::npos)
      << requeued.text;
  fs::remove_all(dir);
}

// Every example pipeline passes `wscsl check`, and trains and evaluates for one epoch (a smoke run
// of each method; the numbers mean nothing at this size): the Fashion-CRB pipelines on a tiny
// Fashion-CRB, the UT-Zappos and Celeb-A ones on generated fixtures in those datasets' layouts.
TEST(Cli, EveryExamplePipelineChecksAndTrains) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_examples_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  wscsl::testing::write_ut_zappos(dir / "zappos");
  wscsl::testing::write_celeba(dir / "celeba");
  wscsl::testing::write_image_folder(dir / "folder", 60);
  const std::string tiny_trainer =
      " --set trainer.epochs=1 --set trainer.batch_size=32 --set trainer.threads=1";
  const std::string tiny_crb =
      " --set dataset.train_items=256 --set dataset.val_items=96 --set dataset.test_items=96"
      " --set dataset.train_triplets=96 --set dataset.val_triplets=64"
      " --set dataset.test_triplets=64";
  // At most 16 training triplets (the fixtures hold fewer of some conditions): batches of 8.
  const std::string fixture_triplets =
      " --set dataset.train_triplets=16 --set dataset.val_triplets=8"
      " --set dataset.test_triplets=8 --set dataset.decode_threads=1"
      " --set trainer.batch_size=8";
  // The TorchScript backbone's file, written as its pipeline says (examples/python).
  const fs::path small_net = dir / "small_net.pt";
  const Output scripted = run_command(std::string(WSCSL_PYTHON) + " " + WSCSL_SOURCE_DIR +
                                      "/examples/python/make_backbone.py " + small_net.string());
  ASSERT_EQ(scripted.status, 0) << scripted.text;
  const std::map<std::string, std::string> real_data = {
      {"ut_zappos", " --set dataset.root=" + (dir / "zappos").string() + fixture_triplets},
      {"celeba", " --set dataset.root=" + (dir / "celeba").string() + fixture_triplets},
      {"torchscript_backbone", " --set backbone.file=" + small_net.string() + tiny_crb},
      {"image_folder", " --set dataset.root=" + (dir / "folder" / "images").string() +
                           " --set dataset.attributes=" +
                           (dir / "folder" / "attributes.csv").string() + fixture_triplets}};
  // The attribute-retrieval pipelines on a small region benchmark of their own.
  const std::string regions = " --set dataset.root=" + (dir / "regions").string() +
                              " --set 'dataset.generated_images=[48,16,16]'"
                              " --set dataset.epoch_triplets=64";
  const std::string_view attribute_prefix = "attribute_";
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(WSCSL_SOURCE_DIR "/examples/pipelines")) {
    if (entry.path().extension() != ".toml") continue;
    ++count;
    const std::string file = entry.path().string();
    const std::string stem = entry.path().stem().string();
    const bool attribute_retrieval = stem.rfind(attribute_prefix, 0) == 0;
    const auto real = real_data.find(stem);
    const std::string data =
        attribute_retrieval ? regions : (real == real_data.end() ? tiny_crb : real->second);
    const Output checked = run_wscsl("check " + file + data);
    EXPECT_EQ(checked.status, 0) << file << "\n" << checked.text;
    const std::string run = (dir / entry.path().stem()).string();
    const Output trained = run_wscsl("train " + file + " --run-dir " + run + tiny_trainer + data);
    EXPECT_EQ(trained.status, 0) << file << "\n" << trained.text;
    EXPECT_NE(
        trained.text.find(attribute_retrieval ? "Attribute-specific retrieval on 'test'"
                                              : "Alignment accuracy on 'test' (fitted on 'val')"),
        std::string::npos)
        << file << "\n"
        << trained.text;
  }
  // default.toml (DiscoverNet-Set), one pipeline per other method, the released 3-pair
  // DiscoverNet-Tra, DiscoverNet with the logistic loss, UT-Zappos, Celeb-A, a TorchScript
  // backbone, an image folder, attribute-specific retrieval with the triplet network, CSN, ASEN
  // (both variants) and ASEN++, and ASEN on the convnet and on the released ResNet-50 trunk (the
  // paper-variant pipelines are in paper/, run by
  // Cli.EveryPipelineAndSuiteOfTheReproductionGuideRuns)
  EXPECT_EQ(count, 26u);
  fs::remove_all(dir);
}

namespace {

// The example files of `folder` ("pipelines" or "suites") that a Markdown text names, as paths
// relative to the repository, in order of first mention.
std::vector<std::string> named_examples(const std::string& text, const std::string& folder) {
  const std::regex path("examples/" + folder + "/[A-Za-z0-9_./-]+\\.toml");
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator();
       ++it)
    if (std::find(found.begin(), found.end(), it->str()) == found.end()) found.push_back(it->str());
  return found;
}

// A pipeline's dataset type and whether its backbone loads pretrained weights.
struct PipelineFacts {
  std::string dataset;
  bool pretrained = false;
};

PipelineFacts facts_of(const std::filesystem::path& pipeline) {
  const wscsl::ConfigNode root = wscsl::load_toml_file(pipeline);
  PipelineFacts facts;
  if (const auto* dataset = root.find("dataset"))
    if (const auto* type = dataset->find("type")) facts.dataset = type->as_string();
  if (const auto* backbone = root.find("backbone"))
    if (const auto* weights = backbone->find("weights"))
      facts.pretrained = weights->is_string() && !weights->as_string().empty();
  return facts;
}

}  // namespace

// docs/reproduce.md names the pipeline and suite of every paper table wscsl can run. Each must run
// as written: every suite is benched with one seed (every row trains a few steps on the generated
// fixture of its dataset and is tabulated), every pipeline passes `check` and, unless a suite
// trained it, trains a few steps and evaluates. The guide and the examples cannot drift apart:
// every pipeline of examples/pipelines/paper/ and every pipeline of a suite must be named in the
// guide.
TEST(Cli, EveryPipelineAndSuiteOfTheReproductionGuideRuns) {
  namespace fs = std::filesystem;
  const fs::path source = WSCSL_SOURCE_DIR;
  const std::string guide = read_text(source / "docs/reproduce.md");
  const std::vector<std::string> pipelines = named_examples(guide, "pipelines");
  const std::vector<std::string> suites = named_examples(guide, "suites");
  ASSERT_GE(pipelines.size(), 50u) << "docs/reproduce.md names too few pipelines";
  ASSERT_GE(suites.size(), 3u) << "docs/reproduce.md names too few suites";
  const std::set<std::string> named(pipelines.begin(), pipelines.end());
  for (const auto& entry : fs::recursive_directory_iterator(source / "examples/pipelines/paper")) {
    if (entry.path().extension() != ".toml") continue;
    const std::string file = fs::relative(entry.path(), source).generic_string();
    EXPECT_EQ(named.count(file), 1u) << file << " is not named in docs/reproduce.md";
  }

  const fs::path dir =
      fs::temp_directory_path() / ("wscsl_reproduce_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  wscsl::testing::write_ut_zappos(dir / "zappos");
  wscsl::testing::write_celeba(dir / "celeba");
  wscsl::testing::write_resnet18_weights(dir / "resnet18.pt");
  // The outfit datasets read the tiny embedded outfit benchmark: its Polyvore Outfits layout (also
  // where a pipeline would generate the medium one), and its Maryland-style variant with Han's own
  // (any-type) test files. The suites train their small networks on all its ~2,000 training pairs;
  // for a ResNet-18 pipeline trained alone that is minutes, so its training outfits keep only
  // their tops and shoes (held-out types leave validation and test whole): three steps of 64.
  const fs::path outfits = dir / "outfit-data";
  wscsl::data::ensure_outfit_benchmark(outfits, {wscsl::data::OutfitPreset::Tiny, 1});
  const std::string few_outfit_pairs =
      " --set dataset.held_out_types='[\"accessories\", \"all-body\", \"bags\", \"bottoms\","
      " \"hats\", \"jewellery\", \"outerwear\", \"scarves\", \"sunglasses\"]'"
      " --set trainer.batch_size=64";
  const std::map<std::string, std::string> trained_alone = {
      {"polyvore_outfits", few_outfit_pairs}, {"maryland_polyvore", few_outfit_pairs}};
  // Two training steps on each other dataset's fixture: UT-Zappos keeps every fixture triplet for
  // validation and test (a few might miss a condition); Celeb-A draws one per attribute.
  const std::map<std::string, std::string> fixture = {
      {"polyvore_outfits", " --set dataset.root=" + outfits.string() +
                               " --set dataset.generate=\"tiny\" --set trainer.batch_size=32"},
      {"maryland_polyvore", " --set dataset.root=" + (outfits / "maryland").string() +
                                " --set dataset.same_type_compatibility=\"\""
                                " --set dataset.same_type_fitb=\"\" --set trainer.batch_size=32"},
      {"ut_zappos", " --set dataset.root=" + (dir / "zappos").string() +
                        " --set dataset.train_triplets=4 --set dataset.val_triplets=0"
                        " --set dataset.test_triplets=0 --set trainer.batch_size=2"},
      {"celeba", " --set dataset.root=" + (dir / "celeba").string() +
                     " --set dataset.train_triplets=8 --set dataset.val_triplets=8"
                     " --set dataset.test_triplets=8 --set trainer.batch_size=4"},
      // The released attribute-retrieval benchmarks' pipelines on a small generated region
      // benchmark in the same layout, at 32 px.
      {"attribute_splits",
       " --set dataset.benchmark=regions --set dataset.root=" + (dir / "regions").string() +
           " --set 'dataset.generated_images=[48,16,16]'"
           " --set dataset.epoch_triplets=8 --set dataset.image_size=32"
           " --set trainer.batch_size=4"}};
  // ASEN++'s second stage crops 112 px for a ResNet-34: 16 px keep its few steps short.
  const std::map<std::string, std::string> pipeline_fixture = {
      {"examples/pipelines/paper/attribute/asenpp_joint.toml",
       " --set condition_module.local_size=16"}};
  const std::string common = " --set dataset.decode_threads=1 --set trainer.epochs=1";
  const std::string weights = " --set backbone.weights=" + (dir / "resnet18.pt").string();

  std::set<std::string> trained;
  for (const std::string& suite : suites) {
    const fs::path file = source / suite;
    const wscsl::ConfigNode root = wscsl::load_toml_file(file);
    const auto* methods = root.find("methods");
    ASSERT_TRUE(methods != nullptr && !methods->items().empty()) << suite;
    std::set<std::string> datasets;
    bool pretrained = false;
    std::vector<std::string> labels;
    for (const wscsl::ConfigNode& method : methods->items()) {
      labels.push_back(method.find("name")->as_string());
      const fs::path pipeline =
          fs::weakly_canonical(file.parent_path() / method.find("pipeline")->as_string());
      const std::string relative = fs::relative(pipeline, source).generic_string();
      EXPECT_EQ(named.count(relative), 1u) << suite << ": " << relative << " is not in the guide";
      const PipelineFacts facts = facts_of(pipeline);
      datasets.insert(facts.dataset);
      pretrained = pretrained || facts.pretrained;
      trained.insert(relative);
    }
    // One fixture per bench: a suite covers one dataset. A run-wide weights override reaches the
    // rows trained from scratch too; `check` below runs those pipelines as written.
    ASSERT_EQ(datasets.size(), 1u) << suite;
    ASSERT_EQ(fixture.count(*datasets.begin()), 1u) << suite << ": " << *datasets.begin();
    const fs::path out = dir / fs::path(suite).stem();
    const Output bench =
        run_wscsl("bench " + file.string() + " --jobs 2 --seeds 1 --output " + out.string() +
                  fixture.at(*datasets.begin()) + common + (pretrained ? weights : ""));
    EXPECT_EQ(bench.status, 0) << suite << "\n" << bench.text;
    const wscsl::ConfigNode* suite_table = root.find("suite")->find("table");
    const std::string table =
        read_text(out / ((suite_table ? suite_table->as_string() : "results") + ".md"));
    for (const std::string& label : labels)
      EXPECT_NE(table.find("| " + label + " | 1 |"), std::string::npos)
          << suite << ": no row " << label << "\n"
          << table;
  }

  for (const std::string& pipeline : pipelines) {
    const fs::path file = source / pipeline;
    ASSERT_TRUE(fs::is_regular_file(file)) << pipeline;
    const PipelineFacts facts = facts_of(file);
    ASSERT_EQ(fixture.count(facts.dataset), 1u) << pipeline << ": " << facts.dataset;
    const auto own = pipeline_fixture.find(pipeline);
    const std::string data = fixture.at(facts.dataset) + common +
                             (facts.pretrained ? weights : "") +
                             (own == pipeline_fixture.end() ? "" : own->second);
    const Output checked = run_wscsl("check " + file.string() + data);
    EXPECT_EQ(checked.status, 0) << pipeline << "\n" << checked.text;
    if (trained.count(pipeline)) continue;
    const fs::path run = dir / "runs" / fs::relative(file, source / "examples/pipelines");
    const auto fewer = trained_alone.find(facts.dataset);
    const Output out =
        run_wscsl("train " + file.string() + " --run-dir " + run.string() + data +
                  (fewer == trained_alone.end() ? "" : fewer->second) + " --set trainer.threads=1");
    EXPECT_EQ(out.status, 0) << pipeline << "\n" << out.text;
    const bool outfits =
        facts.dataset == "polyvore_outfits" || facts.dataset == "maryland_polyvore";
    EXPECT_NE(out.text.find(outfits ? "Fill in the blank on 'test'"
                            : facts.dataset == "attribute_splits"
                                ? "Attribute-specific retrieval on 'test'"
                                : "Alignment accuracy on 'test' (fitted on 'val')"),
              std::string::npos)
        << pipeline << "\n"
        << out.text;
    trained.insert(pipeline);
  }
  fs::remove_all(dir);
}

namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

}  // namespace

TEST(Cli, BenchTrainsEveryMethodAndSeedTabulatesAndResumes) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_bench_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "tiny.toml") << wscsl::test::tiny_pipeline();
  std::ofstream(dir / "suite.toml") << R"([suite]
seeds = [3, 4]
set = ["trainer.epochs=1"]
output = "out"

[[methods]]
name = "tiny"
pipeline = "tiny.toml"

[[methods]]
name = "tiny-sgd"
pipeline = "tiny.toml"
set = ["trainer.optimizer=sgd"]

# Bench columns follow the evaluators' order: GR and OT first, as in the papers' tables.
[[evaluators]]
type = "alignment"

[[evaluators]]
type = "triplet_accuracy"

[[evaluators]]
type = "reversed_triplets"
fractions = [0.0, 1.0]

[[evaluators]]
type = "retrieval"
queries = 10
k = [1, 5]
)";
  const std::string suite = (dir / "suite.toml").string();
  const Output out = run_wscsl("bench " + suite + " --jobs 2");
  ASSERT_EQ(out.status, 0) << out.text;
  for (const char* run : {"tiny/seed-3", "tiny/seed-4", "tiny-sgd/seed-3", "tiny-sgd/seed-4"}) {
    EXPECT_TRUE(fs::exists(dir / "out" / run / "results.json")) << run;
    EXPECT_TRUE(fs::exists(dir / "out" / run / "bench.log")) << run;
    // The suite's evaluators replaced the pipeline's; its `set` applied to every run.
    const std::string resolved = read_text(dir / "out" / run / "resolved.toml");
    EXPECT_NE(resolved.find("type = \"retrieval\""), std::string::npos) << run;
    EXPECT_NE(resolved.find("epochs = 1"), std::string::npos) << run;
    EXPECT_NE(resolved.find("threads = 1"), std::string::npos) << run;
  }
  const std::string md = read_text(dir / "out" / "results.md");
  EXPECT_NE(md.find("- command: `wscsl bench " + suite + " --jobs 2`"), std::string::npos) << md;
  EXPECT_NE(md.find("- machine: "), std::string::npos);
  EXPECT_NE(md.find("| method | seeds | GR | OT | triplet accuracy | reversed valid | MAP "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| tiny | 3 4 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| tiny-sgd | 3 4 | "), std::string::npos) << md;
  // The note above the table, then two rows of 4 columns and a MAP for each of the 4 conditions.
  EXPECT_EQ(count_of(md, " ± "), 1u + 2u * (4 + 4)) << md;
  const std::string csv = read_text(dir / "out" / "results.csv");
  EXPECT_EQ(count_of(csv, "\n"), 3u) << csv;
  EXPECT_EQ(csv.rfind("method,seeds,alignment/gr_accuracy mean,alignment/gr_accuracy std,", 0), 0u)
      << csv;

  // Finished runs are skipped; a run without results (as if interrupted) is trained again.
  fs::remove(dir / "out" / "tiny-sgd" / "seed-4" / "results.json");
  const Output again = run_wscsl("bench " + suite);
  ASSERT_EQ(again.status, 0) << again.text;
  EXPECT_EQ(count_of(again.text, "already finished"), 3u) << again.text;
  EXPECT_NE(again.text.find("tiny-sgd seed 4: resuming"), std::string::npos) << again.text;
  EXPECT_TRUE(fs::exists(dir / "out" / "tiny-sgd" / "seed-4" / "results.json"));

  // A pipeline edited since its runs finished: they are not passed off as its results.
  const Output edited = run_wscsl("bench " + suite + " --set trainer.lr=0.5");
  EXPECT_EQ(edited.status, 2) << edited.text;
  EXPECT_NE(edited.text.find("seed-3 has finished, trained with another pipeline than method "
                             "'tiny' has now"),
            std::string::npos)
      << edited.text;
  EXPECT_EQ(count_of(edited.text, "remove that run directory"), 4u) << edited.text;
  EXPECT_EQ(count_of(edited.text, "first difference: trainer.lr)"), 4u) << edited.text;
  fs::remove_all(dir);
}

TEST(Cli, BenchReportsSuiteErrorsWithTheirPosition) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wscsl_suite_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "tiny.toml") << wscsl::test::tiny_pipeline();
  std::ofstream(dir / "suite.toml") << R"([suite]
seeds = [1]
sede = 2

[[methods]]
name = "tiny"
pipeline = "tiny.toml"

[[methods]]
name = "tiny"
pipeline = "tiny.toml"

[[evaluators]]
type = "retreival"

[[methods]]
name = "other"
pipeline = "missing.toml"
)";
  const std::string suite = (dir / "suite.toml").string();
  const Output out = run_wscsl("bench " + suite);
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_NE(out.text.find(suite + ":3:1: error: unknown key 'sede'"), std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find(suite + ":10:8: error: method name 'tiny' is used twice"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find(suite + ":18:12: error: [methods.2] pipeline file " +
                          (dir / "missing.toml").string() + " does not exist"),
            std::string::npos)
      << out.text;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove(dir / "suite.toml");
  std::ofstream(dir / "suite.toml") << R"([[methods]]
name = "tiny"
pipeline = "tiny.toml"

[[evaluators]]
type = "retreival"
)";
  const Output bad_evaluator = run_wscsl("bench " + suite);
  EXPECT_EQ(bad_evaluator.status, 2) << bad_evaluator.text;
  EXPECT_NE(bad_evaluator.text.find(suite + ":6:8: error: unknown evaluator type \"retreival\""),
            std::string::npos)
      << bad_evaluator.text;
  fs::remove_all(dir);
}

TEST(Cli, CacheListsAndRemovesTheImageStores) {
  namespace fs = std::filesystem;
  const wscsl::testing::ScratchDir scratch("cli_cache");
  const fs::path dir = scratch.path();
  const fs::path pipeline = write_image_folder_pipeline(
      dir, "cache_dir = \"cache\"\n", "[trainer]\nepochs = 1\nbatch_size = 4\nthreads = 1\n");
  const Output trained = run_wscsl("train " + pipeline.string() + " --run-dir " +
                                   (dir / "run").string() + " --stop-after-steps 1");
  ASSERT_EQ(trained.status, 0) << trained.text;
  const std::string cache = " --cache-dir " + (dir / "cache").string();
  const Output listed = run_wscsl("cache list" + cache);
  EXPECT_EQ(listed.status, 0) << listed.text;
  EXPECT_NE(listed.text.find("24 images of 8 px from " +
                             fs::canonical(dir / "folder" / "images").string() + ", built "),
            std::string::npos)
      << listed.text;
  EXPECT_NE(listed.text.find("1 store, "), std::string::npos) << listed.text;
  const Output wrong = run_wscsl("cache remove p.toml" + cache);
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.text.find("p.toml is not named as an image store (*.images)"), std::string::npos)
      << wrong.text;
  const Output removed = run_wscsl("cache remove --all" + cache);
  EXPECT_EQ(removed.status, 0) << removed.text;
  EXPECT_EQ(count_lines_starting(removed.text, "removed " + (dir / "cache").string()), 1u)
      << removed.text;
  const Output empty = run_wscsl("cache list" + cache);
  EXPECT_EQ(empty.text, "no image stores in " + (dir / "cache").string() + "\n");
  EXPECT_TRUE(fs::is_empty(dir / "cache"));
}

// `wscsl make-splits` writes the attribute-retrieval layout from an image folder, and a pipeline
// with the [dataset] table it prints passes `check` (which loads every split) and trains, scored
// by attribute_map on the query and candidate lines.
TEST(Cli, MakeSplitsWritesTheAttributeRetrievalLayout) {
  namespace fs = std::filesystem;
  const wscsl::testing::ScratchDir scratch("cli_splits");
  const fs::path dir = scratch.path();
  const std::string pipeline = write_image_folder_pipeline(dir).string();
  const fs::path out = dir / "splits";
  const Output made =
      run_wscsl("make-splits " + pipeline + " --out " + out.string() +
                " --query-fraction 0.5 --seed 3 --set 'dataset.conditions=[\"color\"]'");
  ASSERT_EQ(made.status, 0) << made.text;
  // 24 images in blocks of 8 per split: 4 query and 4 candidate images in valid and test.
  EXPECT_NE(made.text.find("valid split: 4 query images (4 lines), 4 candidate images (4 lines)"),
            std::string::npos)
      << made.text;
  EXPECT_EQ(read_text(out / "filenames_train.txt").substr(0, 9), "b/0.jpg\na");
  EXPECT_EQ(read_text(out / "label_train.txt").substr(0, 6), "0 0 2\n");  // red: value 2 of 3
  EXPECT_NE(read_text(out / "dataset.toml").find("attributes = [\"color\"]\nvalues = [3]"),
            std::string::npos);
  std::ofstream(dir / "splits.toml")
      << read_text(out / "dataset.toml")
      << "image_size = 8\nepoch_triplets = 16\ndecode_threads = 1\n"
         "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
         "[condition_module]\ntype = \"csn_masks\"\n[[losses]]\ntype = \"margin\"\n"
         "[[evaluators]]\ntype = \"attribute_map\"\n"
         "[trainer]\nepochs = 1\nbatch_size = 8\nthreads = 1\n";
  const Output checked = run_wscsl("check " + (dir / "splits.toml").string());
  EXPECT_EQ(checked.status, 0) << checked.text;
  const Output trained =
      run_wscsl("train " + (dir / "splits.toml").string() + " --run-dir " + (dir / "run").string());
  EXPECT_EQ(trained.status, 0) << trained.text;
  EXPECT_NE(trained.text.find("Attribute-specific retrieval on 'test'"), std::string::npos)
      << trained.text;

  const Output numeric = run_wscsl("make-splits " + pipeline + " --out " + out.string() +
                                   " --set 'dataset.numeric=[\"size\"]'");
  EXPECT_EQ(numeric.status, 1);
  EXPECT_NE(numeric.text.find("condition 'size' is numeric"), std::string::npos) << numeric.text;
  const Output fraction =
      run_wscsl("make-splits " + pipeline + " --out " + out.string() + " --query-fraction 1");
  EXPECT_NE(fraction.text.find("--query-fraction 1 leaves no queries or no candidates"),
            std::string::npos)
      << fraction.text;
}

TEST(Cli, MakeTripletsAndExportWriteTheCsnLayout) {
  namespace fs = std::filesystem;
  const wscsl::testing::ScratchDir scratch("cli_triplets");
  const fs::path dir = scratch.path();
  const std::string pipeline = write_image_folder_pipeline(dir).string();
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
