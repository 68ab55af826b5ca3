#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <torch/cuda.h>
#include <torch/optim/adam.h>

#include "built_pipeline.hpp"
#include "metrics_log.hpp"
#include "pipelines.hpp"
#include "train/trainer.hpp"
#include "train/training_model.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using namespace wscsl::host;
using wscsl::test::metrics_without_time;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("wscsl_resume_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

// `trainer` adds lines to the tiny pipeline's [trainer] table, and tables after it.
TrainResult run(const fs::path& dir, bool resume, std::int64_t stop_after = 0,
                const std::string& trainer = "") {
  Pipeline p = test::built_pipeline(test::tiny_pipeline() + test::kOnTheCpu + trainer);
  const RunDirectory run = resume ? RunDirectory::open(dir) : RunDirectory::create(dir);
  TrainRequest request;
  request.resume = resume;
  request.stop_after_steps = stop_after;
  request.out = std::fopen("/dev/null", "w");
  TrainResult result = train(p, run, request);
  std::fclose(request.out);
  return result;
}

// Every model tensor of a checkpoint, by name.
std::map<std::string, torch::Tensor> weights(const fs::path& checkpoint) {
  Pipeline p = test::built_pipeline(test::tiny_pipeline() + test::kOnTheCpu);  // same model
  auto model = p.model();
  load_checkpoint(checkpoint, *model, nullptr, false, torch::kCPU);
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : model->named_parameters())
    out[item.key()] = item.value().clone();
  for (const auto& item : model->named_buffers())
    out[item.key()] = item.value().clone();
  return out;
}

}  // namespace

TEST(Resume, InterruptedRunsContinueBitForBit) {
  const fs::path straight = fresh_dir("straight");
  const TrainResult reference = run(straight, false);
  ASSERT_EQ(reference.outcome, TrainOutcome::Finished);
  ASSERT_TRUE(reference.test.has_value());
  const std::string expected_steps = read_file(straight / "steps.tsv");
  ASSERT_EQ(std::count(expected_steps.begin(), expected_steps.end(), '\n'), 10);  // 2 × 5 steps
  // Each epoch's line says how long its steps waited for data: a part of its seconds.
  std::istringstream epochs(read_file(straight / "metrics.jsonl"));
  for (std::string line; std::getline(epochs, line);) {
    const auto parsed = nlohmann::json::parse(line);
    EXPECT_GT(parsed.at("data_seconds").get<double>(), 0.0) << line;
    EXPECT_LT(parsed.at("data_seconds").get<double>(), parsed.at("seconds").get<double>()) << line;
  }

  // Stopped mid-epoch (step 3 of epoch 2) and at an epoch boundary, then resumed.
  for (std::int64_t stop : {8, 5}) {
    const fs::path dir = fresh_dir("stopped_" + std::to_string(stop));
    const TrainResult first = run(dir, false, stop);
    ASSERT_EQ(first.outcome, TrainOutcome::Stopped);
    EXPECT_EQ(first.state.global_step, stop);
    const TrainResult second = run(dir, true);
    ASSERT_EQ(second.outcome, TrainOutcome::Finished);
    EXPECT_EQ(read_file(dir / "steps.tsv"), expected_steps) << "stopped after " << stop;
    EXPECT_EQ(metrics_without_time(dir / "metrics.jsonl"),
              metrics_without_time(straight / "metrics.jsonl"));
    const auto a = weights(straight / "checkpoints" / "last.pt");
    const auto b = weights(dir / "checkpoints" / "last.pt");
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [name, tensor] : a)
      EXPECT_TRUE(torch::equal(tensor, b.at(name))) << name;
    EXPECT_EQ(second.test->metrics.size(), reference.test->metrics.size());
    for (std::size_t i = 0; i < reference.test->metrics.size(); ++i)
      EXPECT_EQ(second.test->metrics[i].value, reference.test->metrics[i].value)
          << reference.test->metrics[i].name;
  }
}

// With [[trainer.parameter_groups]] the optimiser has a group (and Adam moments) per rate, each
// decayed every epoch: a run stopped mid-epoch resumes bit for bit.
TEST(Resume, ParameterGroupsResumeBitForBit) {
  const std::string groups =
      "lr_schedule = \"step\"\nstep_size = 1\ngamma = 0.5\n\n[[trainer.parameter_groups]]\n"
      "prefixes = [\"condition_module\"]\nlr = 0.05\n";
  const fs::path straight = fresh_dir("groups_straight");
  ASSERT_EQ(run(straight, false, 0, groups).outcome, TrainOutcome::Finished);
  const fs::path dir = fresh_dir("groups_stopped");
  ASSERT_EQ(run(dir, false, 7, groups).outcome, TrainOutcome::Stopped);
  ASSERT_EQ(run(dir, true, 0, groups).outcome, TrainOutcome::Finished);
  EXPECT_EQ(read_file(dir / "steps.tsv"), read_file(straight / "steps.tsv"));
  const auto a = weights(straight / "checkpoints" / "last.pt");
  const auto b = weights(dir / "checkpoints" / "last.pt");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : a)
    EXPECT_TRUE(torch::equal(tensor, b.at(name))) << name;
  // The checkpoint holds the optimiser's two groups: a model without them cannot take it.
  TrainingModel ungrouped(test::built_pipeline(test::tiny_pipeline() + test::kOnTheCpu),
                          torch::kCPU);
  EXPECT_THROW(load_checkpoint(dir / "checkpoints" / "last.pt", ungrouped.module(),
                               &ungrouped.optimizer(), false, torch::kCPU),
               DataError);
}

TEST(Resume, LogLinesPastTheCheckpointAreDroppedOnResume) {
  const fs::path dir = fresh_dir("extra_lines");
  run(dir, false, 3);
  {
    std::ofstream steps(dir / "steps.tsv", std::ios::app);
    steps << "4\t1\t4\t0.01\t0.5\n";  // written after the checkpoint by a process that then died
  }
  run(dir, true);
  const std::string steps = read_file(dir / "steps.tsv");
  EXPECT_EQ(steps.find("4\t1\t4\t0.01\t0.5\n"), std::string::npos);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 10);
}

TEST(Resume, ARunDirectoryIsNeverOverwritten) {
  const fs::path dir = fresh_dir("twice");
  run(dir, false, 2);
  EXPECT_THROW(RunDirectory::create(dir), Error);
}

TEST(Checkpoint, DamagedBytesAreRefusedBeforeLoading) {
  const fs::path dir = fresh_dir("damaged");
  run(dir, false, 3);
  const fs::path last = dir / "checkpoints" / "last.pt";
  const std::string good = read_file(last);
  Pipeline p = test::built_pipeline(test::tiny_pipeline() + test::kOnTheCpu);
  auto model = p.model();
  EXPECT_NO_THROW(load_checkpoint(last, *model, nullptr, false, torch::kCPU));
  const auto refusal = [&](std::string bytes) {
    write_file_atomically(dir / "bad.pt", bytes);
    try {
      load_checkpoint(dir / "bad.pt", *model, nullptr, false, torch::kCPU);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x01;
  EXPECT_NE(refusal(flipped).find("bad.pt: damaged: its bytes do not match the SHA-256 in its "
                                  "manifest"),
            std::string::npos);
  std::string zeroed = good;
  std::fill(zeroed.begin() + 1000, zeroed.begin() + 1400, '\0');
  EXPECT_NE(refusal(zeroed).find("damaged"), std::string::npos);
  EXPECT_NE(refusal(good.substr(0, good.size() - 100)).find("does not end with wscsl's manifest"),
            std::string::npos);
  EXPECT_NE(refusal(good.substr(0, good.size() / 2)).find("does not end with wscsl's manifest"),
            std::string::npos);
  // A manifest that disagrees with the archive it seals (same length, so only the step differs).
  std::string restepped = good;
  const std::size_t step = restepped.rfind("\"global_step\":3");
  ASSERT_NE(step, std::string::npos);
  restepped[step + 14] = '4';
  EXPECT_NE(
      refusal(restepped).find("bad.pt: damaged: its manifest says step 4, its archive step 3"),
      std::string::npos)
      << refusal(restepped);
  std::string older = good;
  older.replace(older.size() - 8, 8, "WSCSLCK2");
  EXPECT_NE(refusal(older).find("written by an older wscsl (checkpoint format 2"),
            std::string::npos);
  EXPECT_EQ(refusal(good), "loaded");
}

TEST(Checkpoint, ADamagedLastFallsBackToTheOlderOneAndResumesBitForBit) {
  const fs::path reference = fresh_dir("keep_reference");
  ASSERT_EQ(run(reference, false).outcome, TrainOutcome::Finished);
  const fs::path dir = fresh_dir("keep_damaged");
  ASSERT_EQ(run(dir, false).outcome, TrainOutcome::Finished);
  // Two epochs with keep_last = 2: last.pt (after epoch 2) and last.1.pt (after epoch 1).
  const RunDirectory directory(dir);
  const std::vector<fs::path> kept = directory.last_checkpoints();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].filename(), "last.1.pt");
  std::string bytes = read_file(kept[0]);
  bytes[bytes.size() / 3] ^= 0x10;
  write_file_atomically(kept[0], bytes);

  std::vector<std::string> skipped;
  EXPECT_EQ(newest_verified(kept, skipped), kept[1]);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("last.pt: damaged"), std::string::npos) << skipped[0];
  // Resuming from the older checkpoint trains the second epoch again, to the same losses.
  ASSERT_EQ(run(dir, true).outcome, TrainOutcome::Finished);
  EXPECT_EQ(metrics_without_time(dir / "metrics.jsonl"),
            metrics_without_time(reference / "metrics.jsonl"));
  skipped.clear();
  EXPECT_EQ(newest_verified(directory.last_checkpoints(), skipped), kept[0]);  // rewritten whole
  EXPECT_TRUE(skipped.empty());
}

TEST(Checkpoint, CorruptOrForeignFilesAreClearErrors) {
  const fs::path dir = fresh_dir("corrupt");
  fs::create_directories(dir);
  write_file_atomically(dir / "bad.pt", "not a checkpoint");
  Pipeline p = test::built_pipeline(test::tiny_pipeline() + test::kOnTheCpu);
  auto model = p.model();
  try {
    load_checkpoint(dir / "bad.pt", *model, nullptr, false, torch::kCPU);
    FAIL() << "expected an error";
  } catch (const DataError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind((dir / "bad.pt").string() + ": not a wscsl checkpoint", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(load_checkpoint(dir / "missing.pt", *model, nullptr, false, torch::kCPU), DataError);
}

// A checkpoint loads onto any device: the tensors written from the training device (a GPU where
// there is one) come back on the device asked for, the optimiser's moments with them.
TEST(Checkpoint, LoadsOntoTheDeviceAskedForWhateverDeviceWroteIt) {
  const fs::path dir = fresh_dir("devices");
  fs::create_directories(dir);
  const torch::Device written_on =
      torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  Pipeline trained = test::built_tiny_pipeline();
  auto model = trained.model();
  model->to(written_on);
  std::vector<torch::Tensor> trainable;
  for (const torch::Tensor& p : model->parameters())
    if (p.requires_grad()) trainable.push_back(p);
  torch::optim::Adam adam(trainable, torch::optim::AdamOptions(0.1));
  for (torch::Tensor& p : trainable)
    p.mutable_grad() = torch::ones_like(p);
  adam.step();
  TrainingState state;
  state.global_step = 7;
  state.config = "trained";
  save_checkpoint(dir / "written.pt", *model, &adam, state);

  for (const torch::Device device : {torch::Device(torch::kCPU), written_on}) {
    Pipeline fresh = test::built_tiny_pipeline();
    auto loaded = fresh.model();
    std::vector<torch::Tensor> to_train;
    for (const torch::Tensor& p : loaded->parameters())
      if (p.requires_grad()) to_train.push_back(p);
    torch::optim::Adam loaded_adam(to_train, torch::optim::AdamOptions(0.1));
    EXPECT_EQ(load_checkpoint(dir / "written.pt", *loaded, &loaded_adam, false, device).global_step,
              7);
    const auto expected = model->named_parameters();
    for (const auto& item : loaded->named_parameters()) {
      EXPECT_EQ(item.value().device(), device) << item.key();
      EXPECT_TRUE(torch::equal(item.value().cpu(), expected[item.key()].cpu())) << item.key();
    }
    for (const auto& item : loaded->named_buffers())
      EXPECT_EQ(item.value().device(), device) << item.key();
    ASSERT_EQ(loaded_adam.state().size(), adam.state().size());
    for (const auto& entry : loaded_adam.state()) {
      const auto& moments = dynamic_cast<const torch::optim::AdamParamState&>(*entry.second);
      EXPECT_EQ(moments.exp_avg().device(), device);
      EXPECT_EQ(moments.exp_avg_sq().device(), device);
      EXPECT_GT(moments.exp_avg().abs().sum().item<double>(), 0.0) << "the moments were restored";
    }
  }
}
