// kill -9 at random instants and at each named point of the checkpoint protocol (the fault
// points compiled into test builds): every resume succeeds, no checkpoint that was not committed
// is ever loaded, and the run ends with the per-step and per-epoch losses of a run never killed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "pipelines.hpp"
#include "processes.hpp"
#include "wscsl/util/fault_injection.hpp"

namespace fs = std::filesystem;

using wscsl::test::Finished;
using wscsl::test::Launch;
using wscsl::test::metrics_without_time;
using wscsl::test::read_text;

namespace {

// A checkpoint after every step, so that kills land inside the protocol as often as outside it;
// 4 epochs of 5 steps.
const char* const kTrainer =
    " --set trainer.checkpoint_every=1 --set trainer.threads=1 --set trainer.epochs=4";

// The next command that continues `run`: a fresh start until the run directory holds a run.
std::string continue_run(const fs::path& pipeline, const fs::path& run) {
  if (fs::exists(run / "resolved.toml")) return "train --resume " + run.string() + kTrainer;
  return "train " + pipeline.string() + " --run-dir " + run.string() + kTrainer;
}

class Crashes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wscsl_crashes_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pipeline_ = dir_ / "tiny.toml";
    std::ofstream(pipeline_) << wscsl::test::tiny_pipeline() + wscsl::test::kOnTheCpu;
    const auto start = std::chrono::steady_clock::now();
    const Finished reference =
        Launch(continue_run(pipeline_, dir_ / "reference"), "", dir_ / "reference.log").wait();
    ASSERT_EQ(reference.status, 0) << reference.text;
    reference_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Resumes `run` to its end and checks it against the reference run.
  void expect_finishes_like_the_reference(const fs::path& run) {
    const Finished last = Launch(continue_run(pipeline_, run), "", dir_ / "last.log").wait();
    ASSERT_EQ(last.status, 0) << last.text;
    expect_no_skipped_checkpoint(last);
    expect_like_the_reference(run);
  }

  // `run`, complete, has the losses of the reference run and no temporary file.
  void expect_like_the_reference(const fs::path& run) {
    EXPECT_EQ(read_text(run / "steps.tsv"), read_text(dir_ / "reference" / "steps.tsv"));
    EXPECT_EQ(metrics_without_time(run / "metrics.jsonl"),
              metrics_without_time(dir_ / "reference" / "metrics.jsonl"));
    for (const auto& entry : fs::recursive_directory_iterator(run))
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
          << entry.path() << " was left by a killed writer";
  }

  static void expect_no_skipped_checkpoint(const Finished& f) {
    EXPECT_EQ(f.text.find("skipped"), std::string::npos)
        << "a checkpoint that was written had to be skipped:\n"
        << f.text;
  }

  fs::path dir_, pipeline_;
  double reference_seconds_ = 0;
};

}  // namespace

// When the last checkpoint of `run` was committed (the epoch of the clock before there is one).
fs::file_time_type last_commit(const fs::path& run) {
  const fs::path last = run / "checkpoints" / "last.pt";
  return fs::exists(last) ? fs::last_write_time(last) : fs::file_time_type{};
}

// Kills after a random delay within the first two thirds of a whole run's length, resuming
// after each, until the run completes; then again in a new run directory, until at least 12
// kills have landed (a resumed run has less left to do, so most runs end after a few kills).
// A launch killed before it committed a checkpoint (start-up is slower on a loaded machine)
// widens the window by half, one that committed narrows it back towards two thirds, and one that
// finished before its kill narrows it by a third, so that a machine busier or idler than while
// the reference ran delays the test instead of failing it.
TEST_F(Crashes, KillsAtRandomInstantsLoseNothing) {
  std::mt19937 rng(20261124);
  const double usual_window = 0.67 * reference_seconds_;
  double window = usual_window;
  int kills = 0;
  for (int cycle = 0; kills < 12 && cycle < 40; ++cycle) {
    const fs::path run = dir_ / ("random" + std::to_string(cycle));
    for (int launches = 0;; ++launches) {
      ASSERT_LT(launches, 40) << run << " made no progress between kills";
      const fs::file_time_type committed_before = last_commit(run);
      std::uniform_real_distribution<double> instant(0.05, window);
      const Finished f =
          Launch(continue_run(pipeline_, run), "", dir_ / "random.log").kill_after(instant(rng));
      if (!f.killed) {  // it finished before the kill: runs are faster now than the reference
        ASSERT_EQ(f.status, 0) << f.text;
        expect_no_skipped_checkpoint(f);
        window /= 1.5;
        break;
      }
      ++kills;
      window = last_commit(run) == committed_before ? window * 1.5
                                                    : std::max(usual_window, window / 1.5);
    }
    expect_like_the_reference(run);
  }
  EXPECT_GE(kills, 12);
}

TEST_F(Crashes, KillsInsideTheCheckpointProtocolLoseNothing) {
  namespace faults = wscsl::faults;
  const fs::path run = dir_ / "named";
  // Each point is hit at its 2nd passage in the process that reaches it, so that kills land at
  // different steps of the run; after_rotate and after_data twice more.
  const std::vector<std::string> points = {faults::kAfterRotate,
                                           faults::kBeforeData,
                                           faults::kAfterData,
                                           faults::kAfterManifest,
                                           faults::kAfterRename,
                                           std::string(faults::kAfterRotate) + ":3",
                                           std::string(faults::kAfterData) + ":1"};
  int kills = 0;
  for (const std::string& point : points) {
    const std::string fault = point.find(':') == std::string::npos ? point + ":2" : point;
    const Finished f = Launch(continue_run(pipeline_, run), fault, dir_ / "named.log").wait();
    ASSERT_TRUE(f.killed) << fault << " was never reached:\n" << f.text;
    expect_no_skipped_checkpoint(f);
    ++kills;
  }
  EXPECT_EQ(kills, 7);
  expect_finishes_like_the_reference(run);
}

// Weights that are no longer numbers are never committed: the run stops naming the step, and the
// checkpoint already written stays and still evaluates.
TEST(Checkpoint, NonFiniteWeightsAreNeverCommitted) {
  const fs::path dir =
      fs::temp_directory_path() / ("wscsl_nonfinite_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pipeline = dir / "tiny.toml";
  std::ofstream(pipeline) << wscsl::test::tiny_pipeline() + wscsl::test::kOnTheCpu;
  const fs::path run = dir / "run";
  const std::string sgd = " --set trainer.optimizer=sgd --set trainer.checkpoint_every=1";
  const Finished first = Launch("train " + pipeline.string() + " --run-dir " + run.string() + sgd +
                                    " --stop-after-steps 2",
                                "", dir / "first.log")
                             .wait();
  ASSERT_EQ(first.status, 0) << first.text;
  const std::string committed = read_text(run / "checkpoints" / "last.pt");
  // An absurd weight decay: the loss stays finite (decay is not part of it) while the first
  // update overflows the weights to infinity.
  const Finished blown = Launch("train --resume " + run.string() + sgd +
                                    " --set trainer.lr=1e10 --set trainer.weight_decay=1e38",
                                "", dir / "blown.log")
                             .wait();
  EXPECT_EQ(blown.status, 1) << blown.text;
  EXPECT_NE(blown.text.find("is not finite after step 3 (global); no checkpoint was written, "
                            "those already in " +
                            run.string() + " are kept (lower trainer.lr or trainer.weight_decay)"),
            std::string::npos)
      << blown.text;
  EXPECT_EQ(read_text(run / "checkpoints" / "last.pt"), committed);
  const Finished evaluated = Launch("eval " + run.string(), "", dir / "eval.log").wait();
  EXPECT_EQ(evaluated.status, 0) << evaluated.text;
  fs::remove_all(dir);
}

// A checkpoint write that fails (here: the file-size limit) stops the run with one sentence and
// loses nothing: resumed without the limit, the run ends as if it had never failed.
TEST(Checkpoint, AFailedWriteLosesNothing) {
  const fs::path dir = fs::temp_directory_path() / ("wscsl_fsize_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pipeline = dir / "tiny.toml";
  std::ofstream(pipeline) << wscsl::test::tiny_pipeline() + wscsl::test::kOnTheCpu;
  const std::string every = " --set trainer.checkpoint_every=1";
  const fs::path reference = dir / "reference";
  ASSERT_EQ(Launch("train " + pipeline.string() + " --run-dir " + reference.string() + every, "",
                   dir / "reference.log")
                .wait()
                .status,
            0);
  const fs::path run = dir / "run";
  ASSERT_EQ(Launch("train " + pipeline.string() + " --run-dir " + run.string() + every +
                       " --stop-after-steps 2",
                   "", dir / "first.log")
                .wait()
                .status,
            0);
  // Limit files to half a checkpoint (in 512-byte blocks), ignoring the signal that would kill.
  const auto blocks = fs::file_size(run / "checkpoints" / "last.pt") / 1024;
  const Finished failed = Launch("train --resume " + run.string() + every, "", dir / "failed.log",
                                 "trap '' XFSZ; ulimit -f " + std::to_string(blocks) + ";")
                              .wait();
  EXPECT_EQ(failed.status, 1) << failed.text;
  EXPECT_NE(failed.text.find("could not write " + (run / "checkpoints" / "last.pt").string() +
                             " (write failed: File too large); its previous content is unchanged"),
            std::string::npos)
      << failed.text;
  const Finished resumed =
      Launch("train --resume " + run.string() + every, "", dir / "resumed.log").wait();
  ASSERT_EQ(resumed.status, 0) << resumed.text;
  EXPECT_EQ(read_text(run / "steps.tsv"), read_text(reference / "steps.tsv"));
  EXPECT_EQ(metrics_without_time(run / "metrics.jsonl"),
            metrics_without_time(reference / "metrics.jsonl"));
  fs::remove_all(dir);
}
