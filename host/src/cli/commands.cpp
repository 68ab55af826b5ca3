#include "commands.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "evaluation/run_evaluation.hpp"
#include "evaluation/split_check.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/probe.hpp"
#include "rank_job.hpp"
#include "run/clock.hpp"
#include "run/run_job.hpp"
#include "train/trainer.hpp"
#include "triplet_files.hpp"
#include "wscsl/error.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

void print_results(const EvaluationResult& result) {
  fmt::print("{}", format_text(result.tables));
  for (const fs::path& a : result.artifacts)
    fmt::print("wrote {}\n", a.string());
}

}  // namespace

fs::path default_run_directory(const fs::path& pipeline) {
  return fs::path("runs") /
         (pipeline.stem().string() + "-" + now_text("%Y%m%d-%H%M%S", TimeZone::Local));
}

void check_training(const GlobalOptions& global, const TrainArgs& args, int processes) {
  open_pipeline(global, args.resume ? RunDirectory::open(args.run_dir).resolved() : args.pipeline,
                args.overrides, processes);
}

namespace {

// What to do after a failure that left the checkpoints of `run` intact, under the launcher of
// `world`.
std::string how_to_continue(const World& world, const std::string& run) {
  if (world.launcher == Launcher::Torchrun && world.restart < world.max_restarts)
    return fmt::format(
        "torchrun restarts the job ({} of --max_restarts {} used), which continues "
        "from them",
        world.restart, world.max_restarts);
  if (world.launcher == Launcher::Torchrun)
    return fmt::format("torchrun has no restart left (--max_restarts {}); continue with `{}`",
                       world.max_restarts, resume_command(world, run));
  return fmt::format("continue with `{}`", resume_command(world, run));
}

}  // namespace

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
    if (restarted) fmt::print("{}\n", continuing_text(world, me, run));
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
        const TrainResult result = train(pipeline, job.placement(), run, request, job.comm());
        if (result.outcome == TrainOutcome::Interrupted) return 130;
        if (result.test) {
          print_results(*result.test);
          fmt::print("\nresults written to {}\n", run.results_markdown().string());
        }
        return 0;
      },
      after_failure);
}

int run_eval(const GlobalOptions& global, const EvalArgs& args, const World& world) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  RankJob job(global, world, JobWork::Embedding, run.resolved(), args.overrides);
  job.join();
  job.lock(run);
  return job.run([&] {
    const auto result = evaluate_run(job.pipeline(), job.placement().device, run,
                                     job.is_root() ? checkpoint : fs::path(), job.comm());
    if (!result) return 0;
    print_results(*result);
    fmt::print("\nresults written to {}\n", run.results_markdown().string());
    return 0;
  });
}

int run_export_weights(const GlobalOptions& global, const ExportWeightsArgs& args) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  const RunLock lock(run);
  // Copying tensors out needs no GPU, whichever device the run trained on.
  const Placement cpu;
  OpenPipeline opened = open_pipeline_on(global, run.resolved(), DeviceSetting{DeviceKind::Cpu, -1},
                                         "wscsl export-weights (on the CPU)");
  auto model = opened.pipeline.model();
  load_checkpoint(checkpoint, *model, nullptr, false, cpu.device);
  nn::StateDict tensors;
  for (const auto& p : model->named_parameters())
    tensors.emplace_back(p.key(), p.value());
  for (const auto& b : model->named_buffers())
    tensors.emplace_back(b.key(), b.value());
  nn::write_state_dict(args.output, tensors);
  if (args.list)
    for (const auto& [name, tensor] : tensors)
      fmt::print("  {} {}\n", name, shape_of(tensor));
  fmt::print("{} tensors of {} written to {} (Python: torch.load(\"{}\"))\n", tensors.size(),
             checkpoint.string(), args.output.string(), args.output.string());
  return 0;
}

int run_check(const GlobalOptions& global, const fs::path& path,
              const std::vector<std::string>& overrides, const std::set<Kind>& skip_probe) {
  OpenPipeline opened = open_pipeline(global, path, overrides);
  Pipeline& p = opened.pipeline;
  const ProbeReport probe = probe_pipeline(p, skip_probe);
  const std::vector<SplitSize> splits = check_splits(p);
  fmt::print("{}: pipeline is valid\n", path.string());
  fmt::print("  dataset           {}\n", p.dataset->label());
  fmt::print("  backbone          {}\n", p.backbone->label());
  fmt::print("  condition_module  {}\n", p.condition_module->label());
  for (const WeightedLoss& l : p.losses)
    fmt::print("  loss              {} × {}\n", l.weight, l.loss->label());
  for (const NamedEvaluator& e : p.evaluators)
    fmt::print("  evaluator         {} ({})\n", e.name, e.evaluator->label());
  fmt::print("  probed            {} ({} triplets, {:.0f} ms)\n", join(probe.ran, ", "),
             kProbeTriplets, probe.milliseconds);
  for (const SplitSize& s : splits)
    fmt::print("  split             {}: {} triplets over {} images\n", split_name(s.split),
               s.triplets, s.evaluated);
  return 0;
}

int run_make_triplets(const GlobalOptions& global, const DatasetArgs& args,
                      const MakeTripletsOptions& options) {
  const OpenPipeline opened = open_pipeline(global, args.pipeline, args.overrides);
  const Pipeline& p = opened.pipeline;
  fmt::print("wscsl: drawing triplets of {} into {}\n", p.dataset->label(), options.out.string());
  make_triplets(*p.dataset, options, stdout);
  return 0;
}

int run_export(const GlobalOptions& global, const DatasetArgs& args, const fs::path& out) {
  const OpenPipeline opened = open_pipeline(global, args.pipeline, args.overrides);
  const Pipeline& p = opened.pipeline;
  fmt::print("wscsl: exporting {} to {}\n", p.dataset->label(), out.string());
  export_dataset(*p.dataset, out, stdout);
  return 0;
}

}  // namespace wscsl::host
