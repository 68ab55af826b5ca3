// Data-parallel runs over Gloo on loopback: one step of two processes is the step of one (the same
// reduced gradient and parameters, to float summation order), both hold identical parameters
// after every epoch, resume exactly, evaluate like one, and stop with one sentence when a rank
// dies, the port is taken or the world is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <torch/optim/sgd.h>
#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "pipeline/pipeline.hpp"
#include "pipelines.hpp"
#include "ports.hpp"
#include "processes.hpp"
#include "run/checkpoint.hpp"
#include "wscsl/config/toml.hpp"

namespace fs = std::filesystem;
using wscsl::test::BusyPort;
using wscsl::test::Finished;
using wscsl::test::Launch;
using wscsl::test::metrics_without_time;
using wscsl::test::read_text;

namespace {

// A convnet without batch norm, so that a step does not depend on how its batch is split, trained
// by SGD (Adam divides by the root of the squared gradients, which amplifies the differences of
// float summation order from step to step).
std::string pipeline_text() {
  std::string text = wscsl::test::tiny_pipeline();
  const std::string dim = "embedding_dim = 8\n";
  text.replace(text.find(dim), dim.size(), dim + "normalization = \"none\"\n");
  return text + wscsl::test::kOnTheCpu + "\n";
}

// 10 epochs of 5 steps of 32 triplets.
const char* const kTrainer =
    " --set trainer.epochs=10 --set trainer.threads=1 --set trainer.optimizer=sgd";
// One step with momentum: SGD's momentum buffer after the first step is that step's gradient.
const char* const kOneStep =
    " --set trainer.epochs=1 --set trainer.threads=1 --set trainer.optimizer=sgd"
    " --set trainer.momentum=0.9 --stop-after-steps 1";
constexpr double kLr = 0.01;  // the tiny pipeline's

// How far float32 results may move when the batch is shared by two processes instead of one.
// Nothing but the order of summation differs: each process sums its half of the batch, the halves
// are averaged, and its kernels block a batch of 16 unlike one of 32. A gradient element (and the
// loss) is a sum of n float32 terms, and two orders of the same sum differ by at most
// n·u·Σ|terms| (Higham, "Accuracy and Stability of Numerical Algorithms", §4.2; u = 2^-24).
// Here n = 3 roles × 32 triplets × 32·32 positions of the first convolution = 98,304, so
// n·u = 5.9e-3. The test scales it by the largest element of each tensor instead of Σ|terms|
// (which it cannot see): the worst case needs every rounding to point the same way, while their
// typical sum is √n·u (300 times smaller), which leaves that much room for terms that cancel.
// The bound depends on n and the float format only, not on the kernels the CPU selects; the
// mistakes it guards against (a missing, doubled or misweighted share) are of order 1.
constexpr double kUnitRoundoff = 5.9604644775390625e-8;  // 2^-24
constexpr double kSummationBound = 3 * 32 * 32 * 32 * kUnitRoundoff;

std::vector<std::vector<std::string>> rows_of(const fs::path& tsv) {
  std::istringstream in(read_text(tsv));
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');)
      cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// The process whose parent is `parent` and whose environment holds `variable`.
pid_t child_with(pid_t parent, const std::string& variable) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream stat(read_text(entry.path() / "stat"));
    std::string pid, command, state;
    pid_t ppid = 0;
    stat >> pid >> command >> state >> ppid;
    if (ppid != parent) continue;
    const std::string environment = read_text(entry.path() / "environ");
    std::istringstream variables(environment);
    for (std::string v; std::getline(variables, v, '\0');)
      if (v == variable) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The trainable parameters of a run's last checkpoint and the gradient of its first step (SGD's
// momentum buffer), by parameter name.
struct FirstStep {
  std::vector<std::string> names;
  std::vector<torch::Tensor> parameters, gradients;
};

// The optimiser's state of parameter `p`, or null. LibTorch 1.13 keys the states by the address
// of the parameter's TensorImpl printed as text, LibTorch 2 by the address itself.
template <class States>
const torch::optim::OptimizerParamState* state_of(const States& states, const torch::Tensor& p) {
  using Key = typename States::key_type;
  auto found = states.end();
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream printed;
    printed << p.unsafeGetTensorImpl();
    found = states.find(printed.str());
  } else {
    found = states.find(p.unsafeGetTensorImpl());
  }
  return found == states.end() ? nullptr : found->second.get();
}

FirstStep first_step_of(const fs::path& run) {
  using namespace wscsl::host;
  const fs::path resolved = run / "resolved.toml";
  Pipeline pipeline =
      build_pipeline(wscsl::load_toml_file(resolved), resolved, wscsl::test::in_tree_plugins());
  const auto model = pipeline.model();
  FirstStep step;
  std::vector<torch::Tensor> trainable;
  for (const auto& p : model->named_parameters())
    if (p.value().requires_grad()) {
      step.names.push_back(p.key());
      trainable.push_back(p.value());
    }
  torch::optim::SGD sgd(trainable, torch::optim::SGDOptions(kLr).momentum(0.9));
  load_checkpoint(run / "checkpoints" / "last.pt", *model, &sgd, false, torch::kCPU);
  for (const torch::Tensor& p : trainable) {
    const torch::optim::OptimizerParamState* state = state_of(sgd.state(), p);
    step.parameters.push_back(p.detach().clone());
    step.gradients.push_back(
        state ? static_cast<const torch::optim::SGDParamState&>(*state).momentum_buffer()
              : torch::Tensor());
  }
  return step;
}

// How two first steps differ, as shares of the bounds (1 = the bound).
struct StepComparison {
  std::size_t stepped = 0;  // tensors with a gradient
  double largest_gradient_share = 0;
  double largest_parameter_share = 0;
};

StepComparison compare_first_steps(const FirstStep& one, const FirstStep& two) {
  StepComparison c;
  EXPECT_EQ(one.names, two.names);
  for (std::size_t i = 0; i < one.names.size() && i < two.names.size(); ++i) {
    const std::string& name = one.names[i];
    EXPECT_EQ(one.gradients[i].defined(), two.gradients[i].defined()) << name;
    const torch::Tensor& p = one.parameters[i];
    if (!one.gradients[i].defined() || !two.gradients[i].defined()) {
      // Not used by this pipeline's losses: never stepped.
      EXPECT_TRUE(torch::equal(p, two.parameters[i])) << name;
      continue;
    }
    ++c.stepped;
    const double scale = one.gradients[i].abs().max().item<double>();
    const double gradient_tolerance = kSummationBound * scale;
    const double gradient_difference =
        (one.gradients[i] - two.gradients[i]).abs().max().item<double>();
    c.largest_gradient_share =
        std::max(c.largest_gradient_share, gradient_difference / gradient_tolerance);
    // p1 = p0 - lr·g, each of the two operations rounding once.
    const double parameter_tolerance =
        kLr * gradient_tolerance + 2 * kUnitRoundoff * p.abs().max().item<double>();
    c.largest_parameter_share =
        std::max(c.largest_parameter_share,
                 (p - two.parameters[i]).abs().max().item<double>() / parameter_tolerance);
  }
  return c;
}

class Distributed : public ::testing::Test {
 protected:
  // Runs with one process and with two, shared by the tests.
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("wscsl_distributed_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pipeline_ = dir_ / "tiny.toml";
    std::ofstream(pipeline_) << pipeline_text();
    one_ = Launch(train(dir_ / "one"), "", dir_ / "one.log").wait();
    two_ = Launch(train(dir_ / "two") + " --nproc 2", "", dir_ / "two.log").wait();
    one_step_ = Launch(first_step(dir_ / "one_step"), "", dir_ / "one_step.log").wait();
    two_step_ =
        Launch(first_step(dir_ / "two_step") + " --nproc 2", "", dir_ / "two_step.log").wait();
    const fs::path batch_norm = dir_ / "batch_norm.toml";
    std::ofstream(batch_norm) << wscsl::test::tiny_pipeline() + wscsl::test::kOnTheCpu;
    const auto first_bn_step = [&](const std::string& run) {
      return "train " + batch_norm.string() + " --run-dir " + (dir_ / run).string() + kOneStep;
    };
    one_bn_step_ = Launch(first_bn_step("one_bn"), "", dir_ / "one_bn.log").wait();
    two_bn_synchronised_ = Launch(first_bn_step("two_bn_synchronised") +
                                      " --nproc 2 --set trainer.sync_batch_norm=true",
                                  "", dir_ / "two_bn_synchronised.log")
                               .wait();
    two_bn_own_ =
        Launch(first_bn_step("two_bn_own") + " --nproc 2", "", dir_ / "two_bn_own.log").wait();
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string train(const fs::path& run) {
    return "train " + pipeline_.string() + " --run-dir " + run.string() + kTrainer;
  }
  static std::string first_step(const fs::path& run) {
    return "train " + pipeline_.string() + " --run-dir " + run.string() + kOneStep;
  }

  static fs::path dir_, pipeline_;
  static Finished one_, two_, one_step_, two_step_;
  static Finished one_bn_step_, two_bn_synchronised_, two_bn_own_;  // convnet with batch norm
};

fs::path Distributed::dir_, Distributed::pipeline_;
Finished Distributed::one_, Distributed::two_, Distributed::one_step_, Distributed::two_step_;
Finished Distributed::one_bn_step_, Distributed::two_bn_synchronised_, Distributed::two_bn_own_;

}  // namespace

// From the same parameters and batch, the gradient that two processes reduce and the parameters
// they step to are those of one process.
TEST_F(Distributed, OneStepOfTwoProcessesIsTheStepOfOne) {
  ASSERT_EQ(one_step_.status, 0) << one_step_.text;
  ASSERT_EQ(two_step_.status, 0) << two_step_.text;
  const StepComparison c =
      compare_first_steps(first_step_of(dir_ / "one_step"), first_step_of(dir_ / "two_step"));
  EXPECT_GT(c.stepped, 0u);
  EXPECT_LE(c.largest_gradient_share, 1.0);
  EXPECT_LE(c.largest_parameter_share, 1.0);
  std::printf("largest gradient difference: %.3g of the bound (%zu tensors)\n",
              c.largest_gradient_share, c.stepped);
}

// With batch norm, two processes take the step of one when their statistics are synchronised,
// and not otherwise (each then normalises its half of the batch by the half's statistics).
TEST_F(Distributed, SynchronisedBatchNormTakesTheStepOfOneProcess) {
  for (const Finished* run : {&one_bn_step_, &two_bn_synchronised_, &two_bn_own_})
    ASSERT_EQ(run->status, 0) << run->text;
  const FirstStep one = first_step_of(dir_ / "one_bn");
  const StepComparison synchronised =
      compare_first_steps(one, first_step_of(dir_ / "two_bn_synchronised"));
  EXPECT_GT(synchronised.stepped, 0u);
  EXPECT_LE(synchronised.largest_gradient_share, 1.0);
  EXPECT_LE(synchronised.largest_parameter_share, 1.0);
  const StepComparison own = compare_first_steps(one, first_step_of(dir_ / "two_bn_own"));
  EXPECT_GT(own.largest_gradient_share, 10.0);
  std::printf(
      "batch norm: largest gradient difference %.3g of the bound synchronised, %.3g "
      "per process\n",
      synchronised.largest_gradient_share, own.largest_gradient_share);
}

// A short trajectory as a smoke test (over many steps the differences of summation order grow
// with every step at a rate that depends on the CPU's kernels, so only the first steps are held to
// the bound), then identical replicas after every epoch.
TEST_F(Distributed, TwoProcessesTrainLikeOne) {
  ASSERT_EQ(one_.status, 0) << one_.text;
  ASSERT_EQ(two_.status, 0) << two_.text;
  EXPECT_NE(two_.text.find("2 processes × 1 threads"), std::string::npos) << two_.text;
  const auto one = rows_of(dir_ / "one" / "steps.tsv");
  const auto two = rows_of(dir_ / "two" / "steps.tsv");
  ASSERT_EQ(one.size(), 50u);
  ASSERT_EQ(two.size(), 50u);
  for (std::size_t i = 0; i < 5; ++i) {
    const double a = std::stod(one[i][4]), b = std::stod(two[i][4]);
    EXPECT_LE(std::abs(a - b), kSummationBound * std::abs(a))
        << "step " << i + 1 << ": " << a << " vs " << b;
  }
  // Every epoch both processes hold the same parameters (SHA-256 of their bytes).
  const auto replicas = rows_of(dir_ / "two" / "replicas.tsv");
  ASSERT_EQ(replicas.size(), 10u);
  for (const auto& row : replicas) {
    ASSERT_EQ(row.size(), 3u);
    EXPECT_EQ(row[1].size(), 64u);
    EXPECT_EQ(row[1], row[2]) << "epoch " << row[0];
  }
  // Rank 0 alone reports: one summary line per epoch.
  std::size_t summaries = 0;
  for (std::size_t at = two_.text.find("epoch 1/10:"); at != std::string::npos;
       at = two_.text.find("epoch 1/10:", at + 1))
    ++summaries;
  EXPECT_EQ(summaries, 1u) << two_.text;
}

TEST_F(Distributed, AStoppedRunResumesExactly) {
  const fs::path run = dir_ / "stopped";
  const Finished stopped =
      Launch(train(run) + " --nproc 2 --stop-after-steps 17", "", dir_ / "stopped.log").wait();
  ASSERT_EQ(stopped.status, 0) << stopped.text;
  EXPECT_EQ(rows_of(run / "steps.tsv").size(), 17u);
  const Finished resumed =
      Launch("train --resume " + run.string() + " --nproc 2", "", dir_ / "resumed.log").wait();
  ASSERT_EQ(resumed.status, 0) << resumed.text;
  EXPECT_EQ(read_text(run / "steps.tsv"), read_text(dir_ / "two" / "steps.tsv"));
  EXPECT_EQ(metrics_without_time(run / "metrics.jsonl"),
            metrics_without_time(dir_ / "two" / "metrics.jsonl"));
  EXPECT_EQ(read_text(run / "replicas.tsv"), read_text(dir_ / "two" / "replicas.tsv"));
}

TEST_F(Distributed, AKilledRankStopsTheOtherAndTheRunResumes) {
  const fs::path run = dir_ / "killed";
  const std::string every_step =
      " --set trainer.checkpoint_every=1 --set trainer.collective_timeout_s=60";
  Launch job(train(run) + " --nproc 2" + every_step, "", dir_ / "killed.log");
  const auto start = std::chrono::steady_clock::now();
  while (rows_of(run / "steps.tsv").size() < 12 && seconds_since(start) < 120)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const pid_t rank1 = child_with(job.pid(), "RANK=1");
  ASSERT_GT(rank1, 0) << "rank 1 of the job was not found";
  ::kill(rank1, SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  const Finished killed = job.wait();
  EXPECT_LT(seconds_since(killed_at), 60.0);
  EXPECT_NE(killed.status, 0);
  EXPECT_NE(killed.text.find("rank 1 of 2 was killed by signal 9"), std::string::npos)
      << killed.text;
  EXPECT_NE(killed.text.find("rank 0: step "), std::string::npos) << killed.text;
  EXPECT_NE(
      killed.text.find("(continue with `wscsl train --resume " + run.string() + " --nproc 2`)"),
      std::string::npos)
      << killed.text;
  const Finished resumed = Launch("train --resume " + run.string() + " --nproc 2" + every_step, "",
                                  dir_ / "killed_resumed.log")
                               .wait();
  ASSERT_EQ(resumed.status, 0) << resumed.text;
  EXPECT_EQ(read_text(run / "steps.tsv"), read_text(dir_ / "two" / "steps.tsv"));
}

TEST_F(Distributed, TwoProcessesEvaluateLikeOne) {
  ASSERT_EQ(one_.status, 0) << one_.text;
  const auto metrics = [](const fs::path& results) {
    return nlohmann::json::parse(read_text(results)).at("metrics");
  };
  const Finished single = Launch("eval " + (dir_ / "one").string(), "", dir_ / "eval1.log").wait();
  ASSERT_EQ(single.status, 0) << single.text;
  const auto expected = metrics(dir_ / "one" / "results.json");
  const Finished pair =
      Launch("eval " + (dir_ / "one").string() + " --nproc 2", "", dir_ / "eval2.log").wait();
  ASSERT_EQ(pair.status, 0) << pair.text;
  const auto actual = metrics(dir_ / "one" / "results.json");
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_FALSE(expected.empty());
  // The metrics are fractions of counts (of 64 triplets, of conditions): the images' embeddings
  // agree to float summation order, which changes a count only at an exact tie, so the counts are
  // the same and the fractions equal to their printed precision.
  for (const auto& [name, value] : expected.items()) {
    if (value.is_null())  // not a number
      EXPECT_TRUE(actual.at(name).is_null()) << name;
    else
      EXPECT_NEAR(actual.at(name).get<double>(), value.get<double>(), 1e-6) << name;
  }
}

TEST_F(Distributed, ABusyPortIsOneSentence) {
  const BusyPort busy;
  const std::string job =
      "export MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(busy.port()) +
      " WORLD_SIZE=2 RANK=0;";
  const auto start = std::chrono::steady_clock::now();
  const Finished f = Launch(train(dir_ / "busy") + " --set trainer.collective_timeout_s=20", "",
                            dir_ / "busy.log", job)
                         .wait();
  EXPECT_LT(seconds_since(start), 20.0);
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.text.find("rank 0 cannot serve the rendezvous on 127.0.0.1:" +
                        std::to_string(busy.port()) + ": the port is already in use"),
            std::string::npos)
      << f.text;
}

// A store that takes the connection and never answers: a torchrun worker stops within
// trainer.rendezvous_timeout_s (and the watchdog's grace, where a client waits past its own
// timeout, as LibTorch 1.13's does on PyTorch 2's store: launch.mixed_torchrun), with the sentence
// that names the endpoint, the launcher, the LibTorch and the torchrun to use instead.
TEST_F(Distributed, AStoreThatNeverAnswersStopsWithinTheRendezvousBound) {
  const BusyPort silent;
  const std::string endpoint = "127.0.0.1:" + std::to_string(silent.port());
  const std::string torchrun_worker =
      "export MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(silent.port()) +
      " WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 GROUP_WORLD_SIZE=1"
      " ROLE_RANK=1 ROLE_WORLD_SIZE=2 TORCHELASTIC_RUN_ID=silent TORCHELASTIC_RESTART_COUNT=0"
      " TORCHELASTIC_MAX_RESTARTS=0 TORCHELASTIC_USE_AGENT_STORE=True;";
  const auto start = std::chrono::steady_clock::now();
  const Finished f = Launch(train(dir_ / "silent") + " --set trainer.rendezvous_timeout_s=2", "",
                            dir_ / "silent.log", torchrun_worker)
                         .kill_after(60);
  // 2 s, the watchdog's 5 s of grace, and the program's start.
  EXPECT_LT(seconds_since(start), 30.0);
  ASSERT_FALSE(f.killed) << f.text;
  EXPECT_EQ(f.status, 1) << f.text;
  EXPECT_NE(f.text.find("rank 1: not all 2 ranks of the torchrun job reached the rendezvous store "
                        "on " +
                        endpoint + " (served by torchrun's agent) within 2 s"),
            std::string::npos)
      << f.text;
  EXPECT_NE(f.text.find("that LibTorch " TORCH_VERSION " cannot speak to"), std::string::npos)
      << f.text;
  EXPECT_NE(f.text.find(" -m torch.distributed.run` (the torchrun of the PyTorch wscsl is built "
                        "with), or on one machine with `wscsl train … --nproc 2`"),
            std::string::npos)
      << f.text;
  EXPECT_FALSE(fs::exists(dir_ / "silent"));
}

TEST_F(Distributed, AWorldThatDoesNotFitIsOneSentence) {
  const int free_port = wscsl::test::free_port();
  const auto start = std::chrono::steady_clock::now();
  const Finished alone =
      Launch(train(dir_ / "alone") + " --set trainer.rendezvous_timeout_s=3", "",
             dir_ / "alone.log",
             "export MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port) +
                 " WORLD_SIZE=2 RANK=0;")
          .wait();
  EXPECT_LT(seconds_since(start), 30.0);
  EXPECT_EQ(alone.status, 1);
  EXPECT_NE(alone.text.find("rank 0: not all 2 ranks of WORLD_SIZE=2 reached the rendezvous "
                            "store on 127.0.0.1:" +
                            std::to_string(free_port) + " (served by rank 0) within 3 s"),
            std::string::npos)
      << alone.text;
  EXPECT_NE(alone.text.find("start every rank with the same MASTER_ADDR and MASTER_PORT and "
                            "WORLD_SIZE=2, rank 0 among them"),
            std::string::npos)
      << alone.text;

  const Finished outside = Launch(train(dir_ / "outside"), "", dir_ / "outside.log",
                                  "export MASTER_ADDR=127.0.0.1 WORLD_SIZE=2 RANK=2;")
                               .wait();
  EXPECT_EQ(outside.status, 1);
  EXPECT_NE(outside.text.find("RANK=2 does not fit WORLD_SIZE=2"), std::string::npos)
      << outside.text;

  const Finished uneven =
      Launch(train(dir_ / "uneven") + " --nproc 3", "", dir_ / "uneven.log").wait();
  EXPECT_EQ(uneven.status, 2);
  EXPECT_NE(uneven.text.find("'batch_size' = 32 cannot be shared equally by 3 processes"),
            std::string::npos)
      << uneven.text;
  EXPECT_FALSE(fs::exists(dir_ / "uneven"));
}
