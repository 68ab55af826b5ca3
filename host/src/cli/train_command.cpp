#include "train_command.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "distributed/launchers.hpp"
#include "evaluation/run_evaluation.hpp"
#include "evaluation/split_check.hpp"
#include "rank_job.hpp"
#include "run/clock.hpp"
#include "run/run_job.hpp"
#include "train/trainer.hpp"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

// runs/<pipeline>-<local time>: where a run goes without --run-dir.
fs::path default_run_directory(const fs::path& pipeline) {
  return fs::path("runs") /
         (pipeline.stem().string() + "-" + now_text("%Y%m%d-%H%M%S", TimeZone::Local));
}

struct TrainArgs {
  fs::path pipeline;  // empty when resuming
  fs::path run_dir;   // --run-dir, or the run to --resume
  bool resume = false;
  std::vector<std::string> overrides;
  std::int64_t stop_after_steps = 0;
};

// With several processes (`world`), each trains on its share of every batch and rank 0 writes.
int run_train(const GlobalOptions& global, const TrainArgs& args, const World& world) {
  fs::path run_root = args.run_dir;
  if (run_root.empty() && world.size > 1)
    throw Error(
        fmt::format("each of the {} processes started by {} would choose a run directory "
                    "of its own (runs/<pipeline>-<time>): give them one with --run-dir",
                    world.size, launcher_name(world.launcher)));
  // torchrun restarts a failed job with its first command line, and Slurm a requeued job with its
  // batch script: the restart continues the run that job began, from its last checkpoint, as
  // PyTorch's elastic examples load their snapshot. Decided before any process of this start
  // writes, so every process decides alike; rank 0 then refuses another job's run.
  const JobIdentity me = job_identity(world, std::getenv);
  std::error_code exists_error;
  const bool restarted = me.restart > 0 && !args.resume && !run_root.empty() &&
                         fs::exists(RunDirectory(run_root).resolved(), exists_error);
  const bool resume = args.resume || restarted;
  fs::path source = args.pipeline;
  if (resume) source = RunDirectory::open(run_root).resolved();
  RankJob job(global, world, JobWork::Training, source, args.overrides);
  Pipeline& pipeline = job.pipeline();
  // Every split and image is read, and the evaluators held to the splits' sizes, before the run
  // directory is made or a step is taken.
  check_splits(pipeline);
  if (run_root.empty()) run_root = default_run_directory(source);
  const std::string resume_hint = resume_command(world, run_root.string());
  job.join();
  const bool root = job.is_root();
  // Rank 0 alone writes into the run directory; the others read its checkpoints to resume.
  if (root && !resume) refuse_a_run_with_checkpoints(RunDirectory(run_root), resume_hint);
  if (root && restarted) require_own_run(RunDirectory(run_root), me, resume_hint);
  const RunDirectory run = !root    ? RunDirectory(run_root)
                           : resume ? RunDirectory::open(run_root)
                                    : RunDirectory::create(run_root);
  job.lock(run);
  TrainRequest request;
  if (root) {
    // Holding the lock. A run that stopped before its first checkpoint left nothing to keep:
    // --resume and a new `train` into its directory both train it again from step 0.
    std::error_code ec;
    const bool earlier_run = fs::exists(run.resolved(), ec);
    if (!resume) refuse_a_run_with_checkpoints(run, resume_hint);  // written since the look above
    // The run is this job's from now on: a --resume takes it over.
    write_run_job(run, me, source);
    request.resume = resumable(run);
    if (restarted) fmt::print("{}\n", continuing_text(world, me, run.root().string()));
    if (earlier_run && !request.resume)
      fmt::print("{} stopped before its first checkpoint: training it again from step 0\n",
                 run.root().string());
  } else {
    request.resume = resume && !run.last_checkpoints().empty();
  }
  request.out = job.progress_output();
  request.stop_after_steps = args.stop_after_steps;
  if (root)
    fmt::print("run {} — {}{} threads, seed {}, device {}\n", run.root().string(),
               world.size > 1 ? fmt::format("{} processes × ", world.size) : "",
               job.placement().threads, pipeline.trainer.seed, job.placement().device.str());
  install_stop_handlers();
  const std::string after_failure =
      fmt::format("; every process of the job stops, and the checkpoints in {} are intact ({})",
                  run.root().string(), how_to_continue(world, run.root().string()));
  return job.run(
      [&] {
        const TrainResult result = train(pipeline, job.strategy(), run, request);
        if (result.outcome == TrainOutcome::Interrupted) return 130;
        if (result.test) print_evaluation(*result.test, run);
        return 0;
      },
      after_failure);
}

}  // namespace

TrainCommand::TrainCommand(CLI::App& app)
    : Command(app, "train", "Train a pipeline, then evaluate it on the test split") {
  CLI::App& c = subcommand();
  c.add_option("pipeline", pipeline_, "Pipeline TOML file");
  c.add_option("--resume", resume_, "Continue the run in this directory from its last checkpoint");
  c.add_option("--run-dir", run_dir_, "Run directory (default: runs/<pipeline>-<time>)");
  c.add_option("--set", overrides_, "Override a pipeline key: --set trainer.lr=0.01");
  c.add_option("--stop-after-steps", stop_after_steps_,
               "Checkpoint and stop after this many steps in total (resumable)");
  nproc_.add_to(c);
}

int TrainCommand::run(const Invocation& invocation) {
  const bool starts_processes = nproc_.starts_processes(invocation.world);
  TrainArgs args{pipeline_, run_dir_, false, overrides_, stop_after_steps_};
  if (!resume_.empty()) {
    if (!args.pipeline.empty() || !args.run_dir.empty())
      throw UsageError("--resume takes the run directory alone");
    args.resume = true;
    args.run_dir = resume_;
  } else if (args.pipeline.empty()) {
    throw UsageError("train needs a pipeline file (or --resume RUN_DIR)");
  }
  if (!starts_processes) return run_train(invocation.global, args, invocation.world);
  // Built and checked for the job's processes before any starts.
  open_pipeline(invocation.global,
                args.resume ? RunDirectory::open(args.run_dir).resolved() : args.pipeline,
                args.overrides, nproc_.processes());
  if (!args.resume && args.run_dir.empty())
    return nproc_.launch(invocation, {"--run-dir", default_run_directory(args.pipeline).string()});
  return nproc_.launch(invocation);
}

}  // namespace wscsl::host
