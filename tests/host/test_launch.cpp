// wscsl as the worker of the launchers clusters use, each started for real: every command of
// docs/distributed.md "Launching" that starts wscsl runs here as written, in a folder where
// build/bin/wscsl is this build's and examples/pipelines/default.toml the default pipeline made
// small, torchrun being WSCSL_PYTHON's torch.distributed.run. Each run's directory is read back:
// one writer, one metrics line per epoch, TensorBoard points each logged once, the placement in
// [provenance], and training equal bit for bit to the plain torchrun run (the CPU promises it).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "metrics_log.hpp"
#include "ports.hpp"
#include "processes.hpp"
#include "run/event_log.hpp"
#include "run/tfrecord.hpp"
#include "slurm_step.hpp"
#include "tensorboard_events.pb.h"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using wscsl::test::metrics_without_time;
using wscsl::test::read_text;

namespace {

// The commands of docs/distributed.md "Launching" that start wscsl (a fenced line that begins with
// one of them, `\` joining continued lines), each run by a test below.
const std::string kNprocTrain =
    "build/bin/wscsl train examples/pipelines/default.toml --run-dir runs/nproc --nproc 2 "
    "--stop-after-steps 7";
const std::string kNprocResume = "build/bin/wscsl train --resume runs/nproc --nproc 2";
const std::string kNprocEval = "build/bin/wscsl eval runs/nproc --nproc 2";
const std::string kNprocEmbed = "build/bin/wscsl embed runs/nproc --nproc 2";
// Debian 12's torchrun (PyTorch 1.13) knows its options by their underscore names only, and under
// Python 3.11 starts no worker unless --redirects and --tee are 1 or 2 (its Std flags).
const std::string kTorchrun =
    "torchrun --nproc_per_node 2 --redirects 2 --tee 2 --no_python build/bin/wscsl train "
    "examples/pipelines/default.toml --run-dir runs/torchrun";
const std::string kTorchrunEval =
    "torchrun --nproc_per_node 2 --redirects 2 --tee 2 --no_python build/bin/wscsl eval "
    "runs/torchrun";
const std::string kStandalone =
    "torchrun --standalone --nproc_per_node 2 --redirects 2 --tee 2 --no_python build/bin/wscsl "
    "train examples/pipelines/default.toml --run-dir runs/standalone";
const std::string kStatic =
    "torchrun --rdzv_backend static --master_addr 127.0.0.1 --master_port $PORT "
    "--nproc_per_node 2 --redirects 2 --tee 2 --no_python build/bin/wscsl train "
    "examples/pipelines/default.toml --run-dir runs/static";
const std::string kElastic =
    "torchrun --nproc_per_node 2 --max_restarts 1 --redirects 2 --tee 2 --no_python "
    "build/bin/wscsl train examples/pipelines/default.toml --run-dir runs/elastic";
const std::string kTwoNodes =
    "torchrun --nnodes 2 --nproc_per_node 1 --rdzv_backend c10d --rdzv_endpoint $HEAD:$PORT "
    "--rdzv_id $JOB --rdzv_conf join_timeout=20 --redirects 2 --tee 2 --no_python "
    "build/bin/wscsl train examples/pipelines/default.toml --run-dir runs/$JOB";
const std::string kNamespaces =
    "torchrun --nnodes 2 --node_rank $NODE_RANK --nproc_per_node 1 --rdzv_backend static "
    "--master_addr $HEAD --master_port $PORT --redirects 2 --tee 2 --no_python build/bin/wscsl "
    "train examples/pipelines/default.toml --run-dir runs/namespaces";
const std::string kSrun =
    "srun build/bin/wscsl train examples/pipelines/default.toml --run-dir runs/slurm-$SLURM_JOB_ID";
// Kubeflow's PyTorchJob (v1): one process a pod, with MASTER_ADDR, MASTER_PORT, WORLD_SIZE and
// RANK.
const std::string kPyTorchJob =
    "build/bin/wscsl train examples/pipelines/default.toml --run-dir runs/pytorchjob";
// Kubeflow's elastic PyTorchJob and Trainer v2: torchrun, its options from the PET_* variables.
const std::string kPetTorchrun =
    "torchrun --redirects 2 --tee 2 --no_python build/bin/wscsl train "
    "examples/pipelines/default.toml --run-dir runs/pet";

const std::vector<std::string> kTestedCommands = {
    kNprocTrain, kNprocResume, kNprocEval, kNprocEmbed, kTorchrun, kTorchrunEval, kStandalone,
    kStatic,     kElastic,     kTwoNodes,  kNamespaces, kSrun,     kPyTorchJob,   kPetTorchrun};

// 3 epochs of 5 steps of 64 triplets, a checkpoint and the training scalars at every step.
constexpr int kEpochs = 3;
constexpr int kSteps = 15;

// The default pipeline, small: its [dataset] and [trainer] keys replaced where they are.
std::string small_default_pipeline() {
  std::string text = read_text(fs::path(WSCSL_SOURCE_DIR) / "examples/pipelines/default.toml");
  const auto replace = [&](const std::string& line, const std::string& by) {
    const std::size_t at = text.find(line);
    if (at == std::string::npos) throw std::runtime_error("default.toml has no line " + line);
    text.replace(at, line.size(), by);
  };
  replace("type = \"fashion_crb\"\n",
          "type = \"fashion_crb\"\ntrain_items = 256\nval_items = 96\ntest_items = 96\n"
          "train_triplets = 320\nval_triplets = 64\ntest_triplets = 64\n");
  replace("epochs = 5\n", "epochs = 3\n");
  replace("threads = 1 ", "device = \"cpu\"\ncheckpoint_every = 1\nlog_every = 1\nthreads = 1 ");
  return text;
}

std::vector<std::string> launching_commands() {
  std::istringstream doc(read_text(fs::path(WSCSL_SOURCE_DIR) / "docs/distributed.md"));
  std::vector<std::string> commands;
  bool in_section = false, fenced = false;
  std::string line, command;
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Launching";
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) continue;
    const std::size_t text = line.find_first_not_of(' ');
    command += line.substr(text == std::string::npos ? line.size() : text);
    if (!command.empty() && command.back() == '\\') {
      command.pop_back();
      continue;
    }
    for (const char* start : {"torchrun ", "srun ", "build/bin/wscsl "})
      if (command.rfind(start, 0) == 0) commands.push_back(command);
    command.clear();
  }
  return commands;
}

// A shell command run in the background, its output in a file.
class Job {
 public:
  Job(const std::string& command, const fs::path& log) : log_(log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);  // its own group, so that a timeout stops the whole of it
      const std::string redirected = command + " >" + log.string() + " 2>&1";
      ::execl("/bin/sh", "sh", "-c", redirected.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    started_ = std::chrono::steady_clock::now();
  }
  // Its exit status (-1 when killed), after at most `seconds`.
  int wait(double seconds) {
    const auto deadline = started_ + std::chrono::duration<double>(seconds);
    int raw = 0;
    while (::waitpid(pid_, &raw, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, &raw, 0);
        timed_out_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  std::string text() const { return read_text(log_); }
  bool timed_out() const { return timed_out_; }
  double seconds() const { return seconds_; }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  std::chrono::steady_clock::time_point started_;
  bool timed_out_ = false;
  double seconds_ = 0;
};

// `text` as one word of a shell's command line.
std::string shell_word(const std::string& text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Every (tag, step) of the scalars in the event files of `run`, in order.
std::vector<std::pair<std::string, std::int64_t>> scalars(const fs::path& run) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const fs::path& file : wscsl::host::event_files(run)) {
    const wscsl::host::TFRecords read = wscsl::host::read_tfrecords(file);
    EXPECT_EQ(read.problem, "") << file;
    for (const std::string& record : read.records) {
      wscsl::tensorboard::Event e;
      EXPECT_TRUE(e.ParseFromString(record));
      for (const auto& v : e.summary().value())
        if (v.value_case() == wscsl::tensorboard::Summary::Value::kSimpleValue)
          out.emplace_back(v.tag(), e.step());
    }
  }
  return out;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::istringstream in(read_text(file));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// A Slurm job id whose port (15000 + its last four digits, as wscsl derives it) is free now. A
// port the kernel hands out is never below 32768 on Linux, so one that binds now stays free.
int free_slurm_job_id() {
  for (int last = 1000; last < 10000; last += 37) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<std::uint16_t>(15000 + last));
    const bool free = ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(probe);
    if (free) return 4240000 + last;
  }
  return 0;
}

// A daemon in the foreground, stopped (SIGTERM, then SIGKILL) when this goes.
class Daemon {
 public:
  Daemon(const std::string& command, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string redirected = "exec " + command + " >" + log.string() + " 2>&1";
      ::execl("/bin/sh", "sh", "-c", redirected.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Daemon() {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

 private:
  pid_t pid_ = -1;
};

// Why WSCSL_PYTHON's torchrun cannot serve its rendezvous store, or empty when it can: its agent
// makes the store as below, and Debian 13's python3-torch 2.6, built without libuv, fails there
// ("use_libuv was requested but PyTorch was build without libuv support") before any worker
// starts, whatever wscsl does (docs/distributed.md).
std::string torchrun_store_problem() {
  const std::string probe = std::string(WSCSL_PYTHON) +
                            " -c \"import torch.distributed as d; "
                            "d.TCPStore('127.0.0.1', 0, 1, True, multi_tenant=True)\" 2>&1";
  std::FILE* pipe = ::popen(probe.c_str(), "r");
  if (!pipe) return "cannot run " + std::string(WSCSL_PYTHON);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    text.append(buffer, n);
  if (::pclose(pipe) == 0) return "";
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return "this PyTorch's torchrun cannot start its rendezvous store: " +
         text.substr(text.rfind('\n') + 1);
}

// Every test that runs torchrun starts with the plain torchrun run, or is skipped, saying why,
// where this PyTorch's torchrun cannot run at all.
#define TORCHRUN_REFERENCE_OR_SKIP()                                   \
  do {                                                                 \
    if (!torchrun_problem_.empty()) GTEST_SKIP() << torchrun_problem_; \
    reference();                                                       \
  } while (false)

class Launching : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("wscsl_launch_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "build/bin");
    fs::create_directories(dir_ / "examples/pipelines");
    fs::create_directories(dir_ / "logs");
    fs::create_symlink(WSCSL_BINARY, dir_ / "build/bin/wscsl");
    std::ofstream(dir_ / "examples/pipelines/default.toml") << small_default_pipeline();
    std::ofstream(dir_ / "bin/torchrun")
        << "#!/bin/sh\nexec " << WSCSL_PYTHON << " -m torch.distributed.run \"$@\"\n";
    torchrun_problem_ = torchrun_store_problem();
    fs::permissions(dir_ / "bin/torchrun", fs::perms::owner_all, fs::perm_options::add);
    reference_run_ = dir_ / "runs/torchrun";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // `command` as a shell runs it in the folder, with `variables` set and torchrun on the PATH.
  static std::string shell(const std::string& command,
                           const std::map<std::string, std::string>& variables) {
    std::string line = "cd " + shell_word(dir_.string()) +
                       " && export PATH=" + shell_word((dir_ / "bin").string()) +
                       ":\"$PATH\" WSCSL_PLUGIN_PATH=" + shell_word(WSCSL_PLUGIN_DIR);
    for (const auto& [name, value] : variables)
      line += " " + name + "=" + shell_word(value);
    return line + " && exec " + command;
  }

  static Job start(const std::string& name, const std::string& command,
                   const std::map<std::string, std::string>& variables = {}) {
    return Job(shell(command, variables), dir_ / "logs" / (name + ".log"));
  }

  // The plain torchrun run, which every other training run must equal; run once.
  static void reference() {
    static bool done = false;
    if (!done) {
      done = true;
      Job job = start("torchrun", kTorchrun,
                      {{"PET_MASTER_PORT", std::to_string(wscsl::test::free_port())}});
      reference_status_ = job.wait(300);
      reference_text_ = job.text();
      std::printf("torchrun --nproc_per_node 2: %.1f s\n", job.seconds());
    }
  }

  // What one writer leaves: each step and epoch logged once, TensorBoard's points once each,
  // identical replicas, and the job in [provenance].
  static void expect_one_writer(const fs::path& run, int processes, int nodes,
                                const std::string& launcher) {
    const std::vector<std::string> steps = lines_of(run / "steps.tsv");
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(kSteps)) << run;
    for (int i = 0; i < kSteps; ++i)
      EXPECT_EQ(steps[static_cast<std::size_t>(i)].substr(
                    0, steps[static_cast<std::size_t>(i)].find('\t')),
                std::to_string(i + 1))
          << run;
    EXPECT_EQ(lines_of(run / "metrics.jsonl").size(), static_cast<std::size_t>(kEpochs)) << run;
    const auto points = scalars(run);
    const std::set<std::pair<std::string, std::int64_t>> distinct(points.begin(), points.end());
    EXPECT_EQ(distinct.size(), points.size()) << run << ": a TensorBoard point logged twice";
    EXPECT_GE(points.size(), static_cast<std::size_t>(kSteps)) << run;
    const std::vector<std::string> replicas = lines_of(run / "replicas.tsv");
    EXPECT_EQ(replicas.size(), static_cast<std::size_t>(kEpochs)) << run;
    for (const std::string& line : replicas) {
      std::istringstream cells(line);
      std::vector<std::string> digests;
      for (std::string cell; std::getline(cells, cell, '\t');)
        digests.push_back(cell);
      ASSERT_EQ(digests.size(), static_cast<std::size_t>(processes + 1)) << line;
      EXPECT_TRUE(std::all_of(digests.begin() + 1, digests.end(), [&](const std::string& d) {
        return d == digests[1];
      })) << line;
    }
    const std::string resolved = read_text(run / "resolved.toml");
    EXPECT_NE(resolved.find("processes = " + std::to_string(processes) + "\n"), std::string::npos)
        << resolved;
    EXPECT_NE(resolved.find("nodes = " + std::to_string(nodes) + "\n"), std::string::npos)
        << resolved;
    EXPECT_NE(resolved.find("launcher = \"" + launcher + "\"\n"), std::string::npos) << resolved;
    EXPECT_NE(resolved.find("device = \"cpu\"\n"), std::string::npos) << resolved;
  }

  // Training equal to the reference's, bit for bit as far as the logs print (9 digits).
  static void expect_reference_training(const fs::path& run) {
    EXPECT_EQ(read_text(run / "steps.tsv"), read_text(reference_run_ / "steps.tsv")) << run;
    EXPECT_EQ(metrics_without_time(run / "metrics.jsonl"),
              metrics_without_time(reference_run_ / "metrics.jsonl"))
        << run;
    EXPECT_EQ(read_text(run / "replicas.tsv"), read_text(reference_run_ / "replicas.tsv")) << run;
  }

  static fs::path dir_;
  static inline fs::path reference_run_;
  static inline std::string torchrun_problem_;  // why torchrun cannot run here, or empty
  static inline int reference_status_ = -1;
  static inline std::string reference_text_;
};

fs::path Launching::dir_;

}  // namespace

TEST(LaunchingDoc, EveryCommandThatStartsWscslIsRunByATest) {
  std::vector<std::string> documented = launching_commands();
  std::vector<std::string> tested = kTestedCommands;
  std::sort(documented.begin(), documented.end());
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(documented, tested);
}

// torchrun's default rendezvous (its agent serves the store, and every worker joins it), then
// `eval` of the run the same way.
TEST_F(Launching, TorchrunsDefaultRendezvous) {
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  expect_one_writer(reference_run_, 2, 1, "torchrun");
  fs::remove(reference_run_ / "results.json");
  Job eval = start("torchrun_eval", kTorchrunEval,
                   {{"PET_MASTER_PORT", std::to_string(wscsl::test::free_port())}});
  ASSERT_EQ(eval.wait(120), 0) << eval.text();
  EXPECT_TRUE(fs::exists(reference_run_ / "results.json")) << eval.text();
  EXPECT_NE(eval.text().find("results written to runs/torchrun/results.md"), std::string::npos)
      << eval.text();
  std::printf("torchrun … eval: %.1f s\n", eval.seconds());
}

TEST_F(Launching, TorchrunStandaloneAndStatic) {
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  Job standalone = start("standalone", kStandalone);
  ASSERT_EQ(standalone.wait(300), 0) << standalone.text();
  Job fixed = start("static", kStatic, {{"PORT", std::to_string(wscsl::test::free_port())}});
  ASSERT_EQ(fixed.wait(300), 0) << fixed.text();
  std::printf("--standalone: %.1f s, --rdzv_backend static: %.1f s\n", standalone.seconds(),
              fixed.seconds());
  for (const char* run : {"runs/standalone", "runs/static"}) {
    expect_one_writer(dir_ / run, 2, 1, "torchrun");
    expect_reference_training(dir_ / run);
  }
}

// Rank 0 is killed (SIGKILL) while writing the checkpoint of step 10 (its 11th: one a step and
// one an epoch), after that of step 9 was committed; torchrun restarts the job with its first
// command line, which continues from step 9 (and writes 8 checkpoints, too few to meet the
// fault again).
TEST_F(Launching, AnElasticRestartContinuesFromTheLastCheckpoint) {
#ifndef WSCSL_FAULT_INJECTION
  GTEST_SKIP() << "needs a build with WSCSL_FAULT_INJECTION";
#endif
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  Job elastic = start("elastic", kElastic,
                      {{"PET_MASTER_PORT", std::to_string(wscsl::test::free_port())},
                       {"WSCSL_FAULT_AT", "checkpoint.after_rotate:11"}});
  const int status = elastic.wait(300);
  const std::string text = elastic.text();
  ASSERT_EQ(status, 0) << text;
  std::printf("--max_restarts 1, killed at step 10: %.1f s\n", elastic.seconds());
  EXPECT_NE(text.find("torchrun restarted the job (restart 1 of 1): continuing runs/elastic"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("already holds a run"), std::string::npos) << text;
  const fs::path run = dir_ / "runs/elastic";
  expect_one_writer(run, 2, 1, "torchrun");
  expect_reference_training(run);
  // Each start of rank 0 wrote an event file; the second holds only what the first did not keep.
  EXPECT_EQ(wscsl::host::event_files(run).size(), 2u);
}

// Two agents as two machines on loopback, meeting through the c10d rendezvous; then one alone,
// whose partner never comes: torchrun stops it within its join timeout, and wscsl never starts.
TEST_F(Launching, TwoNodesMeetAndANodeThatNeverComesStopsInTime) {
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  const std::map<std::string, std::string> job = {
      {"HEAD", "127.0.0.1"}, {"PORT", std::to_string(wscsl::test::free_port())}, {"JOB", "pair"}};
  Job first = start("node0", kTwoNodes, job);
  Job second = start("node1", kTwoNodes, job);
  ASSERT_EQ(first.wait(300), 0) << first.text();
  ASSERT_EQ(second.wait(60), 0) << second.text();
  std::printf("two nodes (c10d): %.1f s\n", first.seconds());
  expect_one_writer(dir_ / "runs/pair", 2, 2, "torchrun");
  expect_reference_training(dir_ / "runs/pair");

  Job alone = start("alone", kTwoNodes,
                    {{"HEAD", "127.0.0.1"},
                     {"PORT", std::to_string(wscsl::test::free_port())},
                     {"JOB", "alone"}});
  EXPECT_NE(alone.wait(90), 0) << alone.text();
  EXPECT_FALSE(alone.timed_out()) << alone.text();
  EXPECT_LT(alone.seconds(), 60.0);  // join_timeout=20, and torchrun's start
  EXPECT_NE(alone.text().find("RendezvousTimeoutError"), std::string::npos) << alone.text();
  EXPECT_FALSE(fs::exists(dir_ / "runs/alone"));
  std::printf("a node alone: stopped after %.1f s\n", alone.seconds());
}

// Two machines with addresses of their own: network namespaces joined by a veth pair, Gloo on
// the pair's ends (GLOO_SOCKET_IFNAME).
TEST_F(Launching, TwoNodesInNetworkNamespaces) {
  if (::geteuid() != 0) GTEST_SKIP() << "making network namespaces needs root";
  if (std::system("ip netns list >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no `ip netns` (iproute2) here";
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  const std::string tag = std::to_string(::getpid());
  const std::string ns[2] = {"wscsl" + tag + "a", "wscsl" + tag + "b"};
  const std::string end[2] = {"w" + tag + "a", "w" + tag + "b"};  // at most 15 characters
  const std::string address[2] = {"10.46.0.1", "10.46.0.2"};
  // Deleting a namespace deletes the veth end inside it, and one end deletes the pair.
  struct Namespaces {
    const std::string* names;
    const std::string* ends;
    ~Namespaces() {
      const std::string command = "ip netns delete " + names[0] + "; ip netns delete " + names[1] +
                                  "; ip link delete " + ends[0];
      const int status = std::system(("(" + command + ") 2>/dev/null").c_str());
      (void)status;  // what was never made
    }
  } cleanup{ns, end};
  std::string setup = "set -e; ip link add " + end[0] + " type veth peer name " + end[1];
  for (int i = 0; i < 2; ++i)
    setup += "; ip netns add " + ns[i] + "; ip link set " + end[i] + " netns " + ns[i] +
             "; ip -n " + ns[i] + " addr add " + address[i] + "/24 dev " + end[i] + "; ip -n " +
             ns[i] + " link set " + end[i] + " up; ip -n " + ns[i] + " link set lo up";
  const fs::path setup_log = dir_ / "logs/namespaces_setup.log";
  if (std::system(("sh -c " + shell_word(setup) + " >" + setup_log.string() + " 2>&1").c_str()) !=
      0)
    GTEST_SKIP() << "cannot make network namespaces here (" << setup
                 << "): " << read_text(setup_log);
  const std::string port = std::to_string(wscsl::test::free_port());
  std::vector<Job> nodes;
  for (int i = 0; i < 2; ++i)
    nodes.emplace_back("ip netns exec " + ns[i] + " sh -c " +
                           shell_word(shell(kNamespaces, {{"HEAD", address[0]},
                                                          {"PORT", port},
                                                          {"NODE_RANK", std::to_string(i)},
                                                          {"GLOO_SOCKET_IFNAME", end[i]}})),
                       dir_ / "logs" / ("namespace" + std::to_string(i) + ".log"));
  ASSERT_EQ(nodes[0].wait(300), 0) << nodes[0].text();
  ASSERT_EQ(nodes[1].wait(60), 0) << nodes[1].text();
  std::printf("two nodes in network namespaces: %.1f s\n", nodes[0].seconds());
  expect_one_writer(dir_ / "runs/namespaces", 2, 2, "torchrun");
  expect_reference_training(dir_ / "runs/namespaces");
}

// srun's variables of a step of 2 nodes × 2 tasks (job 4242117 with the last four digits made
// free on this machine), the doc's srun line run in each task; then the tasks of one node
// alone, which stop with the sentence naming the ranks that never came.
TEST_F(Launching, ASlurmStepOfTwoNodesOfTwoTasks) {
  const int job_id = free_slurm_job_id();
  ASSERT_NE(job_id, 0);
  const std::string command = kSrun.substr(std::string("srun ").size());
  const auto task = [&](int rank, int tasks, const std::string& extra) {
    return start("slurm" + std::to_string(tasks) + "_" + std::to_string(rank), command + extra,
                 wscsl::test::slurm_task_of_two_by_two(rank, job_id, "localhost,localhost"));
  };
  std::vector<Job> step;
  for (int rank = 0; rank < 4; ++rank)
    step.push_back(task(rank, 4, ""));
  for (int rank = 0; rank < 4; ++rank)
    ASSERT_EQ(step[static_cast<std::size_t>(rank)].wait(300), 0)
        << step[static_cast<std::size_t>(rank)].text();
  std::printf("srun's 2 × 2 tasks: %.1f s\n", step[0].seconds());
  const fs::path run = dir_ / ("runs/slurm-" + std::to_string(job_id));
  expect_one_writer(run, 4, 2, "srun");

  // The second node never comes.
  std::vector<Job> half;
  for (int rank = 0; rank < 2; ++rank)
    half.push_back(task(rank, 2, "-half --set trainer.rendezvous_timeout_s=10"));
  EXPECT_EQ(half[0].wait(120), 1) << half[0].text();
  half[1].wait(120);
  EXPECT_LT(half[0].seconds(), 60.0);
  EXPECT_NE(half[0].text().find("rank 0: not all 4 ranks of the srun step reached the rendezvous "
                                "store on localhost:" +
                                std::to_string(15000 + job_id % 10000) +
                                " (served by rank 0) within 10 s"),
            std::string::npos)
      << half[0].text();
  EXPECT_NE(half[0].text().find("did every task of the step start (srun -n 4)"), std::string::npos)
      << half[0].text();
  EXPECT_FALSE(fs::exists(dir_ / ("runs/slurm-" + std::to_string(job_id) + "-half")));
}

// A Slurm cluster of one machine, of the test's own making (as root, with Debian's slurmctld,
// slurmd, slurm-client and munge): munged, slurmctld and slurmd in the foreground, their
// configuration, key, state and sockets in the test's folder, on free ports; then the doc's srun
// line run as a batch script runs it, in an allocation of 2 tasks (`salloc -n 2`).
TEST_F(Launching, SrunOnAOneMachineSlurmCluster) {
  if (::geteuid() != 0) GTEST_SKIP() << "slurmd starts tasks as root only";
  if (std::system("command -v munged slurmctld slurmd salloc srun sinfo >/dev/null") != 0)
    GTEST_SKIP() << "Debian's slurmctld, slurmd, slurm-client and munge are not installed "
                    "(scripts/setup.sh installs them)";
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  const fs::path slurm = dir_ / "slurm";
  fs::create_directories(slurm / "state");
  fs::create_directories(slurm / "spool");
  {
    std::ofstream key(slurm / "munge.key", std::ios::binary);
    std::ifstream random("/dev/urandom", std::ios::binary);
    std::string bytes(1024, '\0');
    random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    key << bytes;
  }
  fs::permissions(slurm / "munge.key", fs::perms::owner_read);
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const int job_id = free_slurm_job_id();
  ASSERT_NE(job_id, 0);
  const std::string s = slurm.string();
  std::ofstream(slurm / "slurm.conf")
      << "ClusterName=wscsl\nSlurmctldHost=" << host << "(127.0.0.1)\nSlurmUser=root\n"
      << "SlurmdUser=root\nAuthType=auth/munge\nAuthInfo=socket=" << s << "/munge.sock\n"
      << "CredType=cred/munge\nStateSaveLocation=" << s << "/state\nSlurmdSpoolDir=" << s
      << "/spool\nSlurmctldPidFile=" << s << "/slurmctld.pid\nSlurmdPidFile=" << s
      << "/slurmd.pid\nSlurmctldPort=" << wscsl::test::free_port()
      << "\nSlurmdPort=" << wscsl::test::free_port() << "\nFirstJobId=" << job_id
      << "\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\nMpiDefault=none\nReturnToService=2\n"
      << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
      << "SelectTypeParameters=CR_Core\nNodeName=" << host
      << " NodeAddr=127.0.0.1 CPUs=" << std::max(2u, std::thread::hardware_concurrency())
      << " State=UNKNOWN\n"
      << "PartitionName=wscsl Nodes=" << host << " Default=YES MaxTime=INFINITE State=UP\n";
  const std::string conf = "SLURM_CONF=" + shell_word(s + "/slurm.conf");
  const auto started = std::chrono::steady_clock::now();
  const Daemon munged("munged --foreground --force --key-file=" + s + "/munge.key --socket=" + s +
                          "/munge.sock --log-file=" + s + "/munged.log --pid-file=" + s +
                          "/munged.pid --seed-file=" + s + "/munged.seed",
                      slurm / "munged.out");
  const Daemon controller("env " + conf + " slurmctld -D -i", slurm / "slurmctld.out");
  const Daemon node("env " + conf + " slurmd -D", slurm / "slurmd.out");
  bool idle = false;
  while (!idle && std::chrono::steady_clock::now() - started < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    idle =
        std::system(("env " + conf + " sinfo -h -o %T 2>/dev/null | grep -qx idle").c_str()) == 0;
  }
  ASSERT_TRUE(idle) << "the node never became idle: " << read_text(slurm / "slurmctld.out")
                    << read_text(slurm / "slurmd.out");
  std::printf("Slurm cluster up in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  Job job =
      start("srun", "salloc -n 2 sh -c " + shell_word(kSrun), {{"SLURM_CONF", s + "/slurm.conf"}});
  ASSERT_EQ(job.wait(300), 0) << job.text();
  std::printf("salloc -n 2 … srun: %.1f s\n", job.seconds());
  const fs::path run = dir_ / ("runs/slurm-" + std::to_string(job_id));
  expect_one_writer(run, 2, 1, "srun");
  expect_reference_training(run);
}

// Kubeflow's PyTorchJob (v1) as its operator starts the pods: the same command in each, with
// MASTER_ADDR (the master pod's service), MASTER_PORT, WORLD_SIZE (the pods) and RANK; here two
// processes on loopback. The training is the torchrun run's.
TEST_F(Launching, KubeflowPyTorchJobPods) {
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  const std::string port = std::to_string(wscsl::test::free_port());
  std::vector<Job> pods;
  for (const char* rank : {"0", "1"})
    pods.push_back(start(std::string("pytorchjob") + rank, kPyTorchJob,
                         {{"MASTER_ADDR", "127.0.0.1"},
                          {"MASTER_PORT", port},
                          {"WORLD_SIZE", "2"},
                          {"RANK", rank}}));
  for (Job& pod : pods)
    ASSERT_EQ(pod.wait(300), 0) << pod.text();
  std::printf("PyTorchJob pods: %.1f s\n", pods[0].seconds());
  expect_one_writer(dir_ / "runs/pytorchjob", 2, 1, "the environment");
  expect_reference_training(dir_ / "runs/pytorchjob");
}

// Kubeflow's elastic PyTorchJob and Trainer v2 start torchrun with its options in PET_* variables.
TEST_F(Launching, KubeflowPetVariablesThroughTorchrun) {
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  Job job = start("pet", kPetTorchrun,
                  {{"PET_NNODES", "1"},
                   {"PET_NPROC_PER_NODE", "2"},
                   {"PET_NODE_RANK", "0"},
                   {"PET_MASTER_ADDR", "127.0.0.1"},
                   {"PET_MASTER_PORT", std::to_string(wscsl::test::free_port())}});
  ASSERT_EQ(job.wait(300), 0) << job.text();
  std::printf("torchrun from PET_* variables: %.1f s\n", job.seconds());
  expect_one_writer(dir_ / "runs/pet", 2, 1, "torchrun");
  expect_reference_training(dir_ / "runs/pet");
}

// The launch matrix's mixed cells (ctest's launch.mixed_torchrun): this build under the torchrun
// of another PyTorch, WSCSL_OTHER_PYTHON's (the variable, else the build's setting: Debian's 1.13
// for a build against a wheel; the wheel leg's virtual environment for one against Debian's
// LibTorch). Their stores do not speak to each other; every worker stops within the rendezvous
// bound and its grace with the sentence that names the torchrun to use instead, and torchrun ends.
TEST_F(Launching, TheTorchrunOfAnotherPyTorchStopsWithinTheBound) {
  const char* chosen = std::getenv("WSCSL_OTHER_PYTHON");
  const fs::path other = chosen ? chosen : WSCSL_OTHER_PYTHON;
  if (!fs::exists(other))
    GTEST_SKIP() << "no other PyTorch at " << other
                 << " (the wheel leg's virtual environment: scripts/test.sh --wheel makes it)";
  Job job = start("mixed",
                  other.string() +
                      " -m torch.distributed.run --nproc_per_node 2 --redirects 2 --tee 2 "
                      "--no_python build/bin/wscsl train examples/pipelines/default.toml "
                      "--run-dir runs/mixed --set trainer.rendezvous_timeout_s=5",
                  {{"PET_MASTER_PORT", std::to_string(wscsl::test::free_port())}});
  const int status = job.wait(120);
  const std::string text = job.text();
  std::printf("%s's torchrun: %.1f s\n", other.c_str(), job.seconds());
  ASSERT_FALSE(job.timed_out()) << text;
  if (status == 0) {  // a pair whose stores speak to each other after all: it must train right
    expect_one_writer(dir_ / "runs/mixed", 2, 1, "torchrun");
    return;
  }
  // No C++ backtrace of LibTorch's store client (PyTorch 2's logs one for every try).
  EXPECT_EQ(text.find("frame #"), std::string::npos) << text;
  // torchrun stops the other worker as soon as one fails: one sentence at least.
  EXPECT_LT(job.seconds(), 60.0) << text;
  EXPECT_NE(text.find(": not all 2 ranks of the torchrun job reached the rendezvous store on "
                      "127.0.0.1:"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" -m torch.distributed.run` (the torchrun of the PyTorch wscsl is built "
                      "with)"),
            std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(dir_ / "runs/mixed/resolved.toml"));
}

// wscsl's own launcher: 7 steps, then resumed to the end, evaluated and embedded; the training is
// the torchrun run's.
TEST_F(Launching, NprocStopsResumesEvaluatesAndEmbeds) {
  TORCHRUN_REFERENCE_OR_SKIP();
  ASSERT_EQ(reference_status_, 0) << reference_text_;
  for (const std::string& command : {kNprocTrain, kNprocResume, kNprocEval, kNprocEmbed}) {
    Job job = start("nproc", command);
    ASSERT_EQ(job.wait(300), 0) << command << "\n" << job.text();
    std::printf("%s: %.1f s\n", command.c_str(), job.seconds());
  }
  const fs::path run = dir_ / "runs/nproc";
  expect_one_writer(run, 2, 1, "--nproc");
  expect_reference_training(run);
  EXPECT_TRUE(fs::exists(run / "embeddings/test_phi.npy"));
}

// Two nodes of two processes on one machine, each node with its own dataset.cache_dir: the
// processes of each node share one image store of its own (one store file, no builder's temporary
// left), and train as four processes that share one store.
TEST_F(Launching, NodeLocalImageStores) {
  if (!torchrun_problem_.empty()) GTEST_SKIP() << torchrun_problem_;
  wscsl::testing::write_image_folder(dir_ / "folder");
  std::ofstream(dir_ / "images.toml")
      << "[dataset]\ntype = \"image_folder\"\nroot = \"" << (dir_ / "folder/images").string()
      << "\"\nattributes = \"" << (dir_ / "folder/attributes.csv").string()
      << "\"\nimage_size = 8\ndecode_threads = 1\n"
         "train_triplets = 16\nval_triplets = 4\ntest_triplets = 4\n"
         "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
         "[condition_module]\ntype = \"discovernet\"\n[[losses]]\ntype = \"margin\"\n"
         "[trainer]\nepochs = 2\nbatch_size = 4\nthreads = 1\ndevice = \"cpu\"\n"
         "evaluate_after = false\n";
  const std::string train = "build/bin/wscsl train images.toml --set dataset.cache_dir=$CACHE ";
  Job shared = start("stores_shared", train + "--run-dir runs/stores_shared --nproc 4",
                     {{"CACHE", (dir_ / "cache_shared").string()}});
  ASSERT_EQ(shared.wait(300), 0) << shared.text();
  const std::string port = std::to_string(wscsl::test::free_port());
  std::vector<Job> nodes;
  for (int i = 0; i < 2; ++i)
    nodes.push_back(
        start("stores_node" + std::to_string(i),
              "torchrun --nnodes 2 --nproc_per_node 2 --rdzv_backend c10d "
              "--rdzv_endpoint 127.0.0.1:$PORT --rdzv_id stores --redirects 2 --tee "
              "2 --no_python " +
                  train + "--run-dir runs/stores",
              {{"PORT", port}, {"CACHE", (dir_ / ("cache" + std::to_string(i))).string()}}));
  for (Job& node : nodes)
    ASSERT_EQ(node.wait(300), 0) << node.text();
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> stores, temporaries;
    for (const fs::directory_entry& e :
         fs::directory_iterator(dir_ / ("cache" + std::to_string(i)))) {
      const std::string name = e.path().filename().string();
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".images") == 0)
        stores.push_back(name);
      if (name.find(".images.tmp-") != std::string::npos) temporaries.push_back(name);
    }
    EXPECT_EQ(stores.size(), 1u) << "node " << i;
    EXPECT_TRUE(temporaries.empty()) << "node " << i;
  }
  EXPECT_EQ(lines_of(dir_ / "runs/stores/steps.tsv").size(), 8u);  // 2 epochs of 4 steps
  EXPECT_EQ(read_text(dir_ / "runs/stores/steps.tsv"),
            read_text(dir_ / "runs/stores_shared/steps.tsv"));
}
