#include "commands.hpp"

#include <ATen/Parallel.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "distributed/communicator.hpp"
#include "distributed/placement.hpp"
#include "evaluation/run_evaluation.hpp"
#include "evaluation/split_check.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/probe.hpp"
#include "run/clock.hpp"
#include "train/trainer.hpp"
#include "triplet_files.hpp"
#include "wscsl/data/npy.hpp"
#include "wscsl/error.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

// Other floating types are written as float32, integer and boolean types as int64.
void write_tensor_npy(const fs::path& file, const at::Tensor& tensor) {
  const bool floating = at::isFloatingType(tensor.scalar_type());
  const at::Tensor data = tensor.to(floating ? at::kFloat : at::kLong).to(at::kCPU).contiguous();
  // Little-endian on every platform LibTorch ships for; '<' states it.
  write_npy(file, floating ? "<f4" : "<i8", data.sizes().vec(),
            {static_cast<const char*>(data.data_ptr()), data.nbytes()});
}

extern "C" void on_stop_signal(int) {
  request_stop();
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
  std::signal(SIGTERM, SIG_DFL);
}

// A failure in one process of a job ends that process at once, so that the others see the lost
// connection and stop too instead of waiting out a collective that cannot complete; rank 0's
// checkpoints are committed atomically, so nothing saved is lost.
[[noreturn]] void end_the_process(const std::string& failure, const std::string& after_failure) {
  fmt::print(stderr, "wscsl: error: {}{}\n", failure, after_failure);
  std::fflush(nullptr);
  std::_Exit(1);
}

template <class Body>
int as_rank(const Communicator& comm, const std::string& after_failure, Body&& body) {
  if (comm.size() == 1) return body();
  try {
    return body();
  } catch (const RankError& e) {
    end_the_process(e.what(), after_failure);
  } catch (const std::exception& e) {
    end_the_process(RankError(comm.rank(), e.what()).what(), after_failure);
  }
}

// This process of the job `world` describes: where it computes, and its communicator.
struct Job {
  Placement placement;
  std::unique_ptr<Communicator> comm;
};

Job join_job(const TrainerOptions& trainer, const World& world) {
  Job job{place(trainer, world), nullptr};
  at::set_num_threads(job.placement.threads);
  job.comm = Communicator::join(world, std::chrono::seconds(trainer.collective_timeout_s),
                                job.placement.collective_backend, job.placement.device);
  return job;
}

// Where this process's progress goes: only rank 0 reports.
std::FILE* progress_output(const Communicator& comm) {
  if (comm.is_root()) return stdout;
  static std::FILE* null = std::fopen("/dev/null", "w");
  return null;
}

using Json = nlohmann::ordered_json;

std::vector<std::int64_t> long_values(const torch::Tensor& t) {
  const torch::Tensor values = t.to(torch::kLong).contiguous();
  return {values.data_ptr<std::int64_t>(), values.data_ptr<std::int64_t>() + values.numel()};
}

// <split>_files.json: the file of each row of the split's arrays, relative to `image_root`, for a
// dataset of image files; nothing for one whose images are generated.
void write_row_files(Dataset& dataset, const EmbeddingTable& table, const fs::path& file) {
  const std::optional<SplitAttributes> attributes = dataset.attributes(table.split);
  if (!attributes || attributes->files.empty()) return;
  Json files = Json::array();
  for (std::int64_t id : long_values(table.image_ids))
    files.push_back(attributes->files.at(static_cast<std::size_t>(id)));
  const Json document = {{"image_root", attributes->image_root.string()}, {"files", files}};
  write_file_atomically(file, document.dump(2) + "\n");
}

// The condition ↔ embedding alignment of an embedded run, for alignment.json: the identity of a
// conditioned module with one embedding per condition, else what the pipeline's alignment
// evaluators publish when fitted on the validation split (measured on the test split).
struct EmbeddedAlignment {
  bool identity = false;
  std::map<std::string, torch::Tensor> published;
};

bool has_alignment_evaluator(const Pipeline& pipeline) {
  for (const NamedEvaluator& e : pipeline.evaluators)
    if (!e.evaluator->contract().provided_names(Resource::Alignment).empty()) return true;
  return false;
}

Json alignment_json(const Pipeline& pipeline, const EmbeddedAlignment& alignment) {
  const DatasetInfo info = pipeline.dataset->info();
  Json strategies = Json::object();
  if (alignment.identity) {
    std::vector<std::int64_t> identity(info.conditions.size());
    for (std::size_t c = 0; c < identity.size(); ++c)
      identity[c] = static_cast<std::int64_t>(c);
    strategies["identity"] = {{"embedding_of_condition", identity},
                              {"condition_of_embedding", identity}};
  }
  for (aligned::Strategy strategy :
       {aligned::Strategy::Ot, aligned::Strategy::Exact, aligned::Strategy::Greedy}) {
    const auto assignment = alignment.published.find(aligned::assignment_key(strategy));
    const auto inverse = alignment.published.find(aligned::condition_of_embedding_key(strategy));
    if (assignment == alignment.published.end() || inverse == alignment.published.end()) continue;
    strategies[aligned::spelling(strategy)] = {
        {"embedding_of_condition", long_values(assignment->second)},
        {"condition_of_embedding", long_values(inverse->second)}};
  }
  return {{"conditions", info.condition_names()},
          {"num_embeddings", pipeline.condition_module->num_embeddings()},
          {"fitted_on", alignment.identity || alignment.published.empty() ? "" : "val"},
          {"alignments", strategies}};
}

void print_results(const EvaluationResult& result) {
  fmt::print("{}", format_text(result.tables));
  for (const fs::path& a : result.artifacts)
    fmt::print("wrote {}\n", a.string());
}

}  // namespace

void install_stop_handlers() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

fs::path default_run_directory(const fs::path& pipeline) {
  return fs::path("runs") /
         (pipeline.stem().string() + "-" + now_text("%Y%m%d-%H%M%S", TimeZone::Local));
}

void check_training(const GlobalOptions& global, const TrainArgs& args, int processes) {
  GlobalOptions job = global;
  job.processes = processes;
  open_pipeline(job, args.resume ? RunDirectory::open(args.run_dir).resolved() : args.pipeline,
                args.overrides);
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
  // torchrun restarts a failed job with its first command line: the restart continues the run
  // that command began, from its last checkpoint, as PyTorch's elastic examples load their
  // snapshot. Decided before any process of this start writes, so every process decides alike.
  std::error_code exists_error;
  const bool restarted = world.restart > 0 && !args.resume && !run_root.empty() &&
                         fs::exists(RunDirectory(run_root).resolved(), exists_error);
  const bool resume = args.resume || restarted;
  fs::path source = args.pipeline;
  if (resume) source = RunDirectory::open(run_root).resolved();
  GlobalOptions options = global;
  options.processes = world.size;
  OpenPipeline opened = open_pipeline(options, source, args.overrides);
  Pipeline& pipeline = opened.pipeline;
  // Every split and image is read, and the evaluators held to the splits' sizes, before the run
  // directory is made or a step is taken.
  check_splits(pipeline);
  if (run_root.empty()) run_root = default_run_directory(source);
  const std::string resume_hint = resume_command(world, run_root.string());
  const Job job = join_job(pipeline.trainer, world);
  const Placement& placement = job.placement;
  const std::unique_ptr<Communicator>& comm = job.comm;
  // Rank 0 alone writes into the run directory; the others read its checkpoints to resume.
  if (comm->is_root() && !resume)
    refuse_a_run_with_checkpoints(RunDirectory(run_root), resume_hint);
  const RunDirectory run = !comm->is_root() ? RunDirectory(run_root)
                           : resume         ? RunDirectory::open(run_root)
                                            : RunDirectory::create(run_root);
  std::optional<RunLock> lock;
  if (comm->is_root()) lock.emplace(run);
  TrainRequest request;
  if (comm->is_root()) {
    // Holding the lock. A run that stopped before its first checkpoint left nothing to keep:
    // --resume and a new `train` into its directory both train it again from step 0.
    std::error_code ec;
    const bool earlier_run = fs::exists(run.resolved(), ec);
    if (!resume) refuse_a_run_with_checkpoints(run, resume_hint);  // written since the look above
    request.resume = resumable(run);
    if (restarted)
      fmt::print("torchrun restarted the job (restart {} of {}): continuing {}\n", world.restart,
                 world.max_restarts, run.root().string());
    if (earlier_run && !request.resume)
      fmt::print("{} stopped before its first checkpoint: training it again from step 0\n",
                 run.root().string());
  } else {
    request.resume = resume && !run.last_checkpoints().empty();
  }
  request.out = progress_output(*comm);
  request.stop_after_steps = args.stop_after_steps;
  if (comm->is_root())
    fmt::print("run {} — {}{} threads, seed {}, device {}\n", run.root().string(),
               world.size > 1 ? fmt::format("{} processes × ", world.size) : "", placement.threads,
               pipeline.trainer.seed, placement.device.str());
  install_stop_handlers();
  const std::string after_failure =
      fmt::format("; every process of the job stops, and the checkpoints in {} are intact ({})",
                  run.root().string(), how_to_continue(world, run.root().string()));
  return as_rank(*comm, after_failure, [&] {
    const TrainResult result = train(pipeline, placement, run, request, *comm);
    if (result.outcome == TrainOutcome::Interrupted) return 130;
    if (result.test) {
      print_results(*result.test);
      fmt::print("\nresults written to {}\n", run.results_markdown().string());
    }
    return 0;
  });
}

namespace {

// The run of a run directory or of a checkpoint file inside it, and the checkpoint to use.
std::pair<RunDirectory, fs::path> run_and_checkpoint(const fs::path& target) {
  std::error_code ec;
  const bool is_file = fs::is_regular_file(target, ec);
  // A checkpoint lives in <run>/checkpoints/.
  RunDirectory run = RunDirectory::open(is_file ? target.parent_path().parent_path() : target);
  fs::path checkpoint = is_file ? target : checkpoint_for_evaluation(run);
  return {std::move(run), std::move(checkpoint)};
}

}  // namespace

int run_eval(const GlobalOptions& global, const EvalArgs& args, const World& world) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  OpenPipeline opened = open_pipeline(global, run.resolved(), args.overrides);
  Pipeline& pipeline = opened.pipeline;
  const Job job = join_job(pipeline.trainer, world);
  const Placement& placement = job.placement;
  const std::unique_ptr<Communicator>& comm = job.comm;
  std::optional<RunLock> lock;
  if (comm->is_root()) lock.emplace(run);
  return as_rank(*comm, "", [&] {
    const auto result = evaluate_run(pipeline, placement.device, run,
                                     comm->is_root() ? checkpoint : fs::path(), *comm);
    if (!result) return 0;
    print_results(*result);
    fmt::print("\nresults written to {}\n", run.results_markdown().string());
    return 0;
  });
}

int run_embed(const GlobalOptions& global, const EmbedArgs& args, const World& world) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  OpenPipeline opened = open_pipeline(global, run.resolved(), args.overrides);
  Pipeline& pipeline = opened.pipeline;
  const DatasetInfo info = pipeline.dataset->info();
  for (Split split : args.splits)
    if (!info.has_split(split)) {
      std::vector<std::string> names;
      for (Split s : info.splits)
        names.emplace_back(split_name(s));
      throw Error(fmt::format("{} has no split '{}' (it has: {})", pipeline.dataset->label(),
                              split_name(split), join(names, ", ")));
    }
  const Job job = join_job(pipeline.trainer, world);
  const Placement& placement = job.placement;
  const std::unique_ptr<Communicator>& comm = job.comm;
  std::optional<RunLock> lock;
  if (comm->is_root()) lock.emplace(run);
  return as_rank(*comm, "", [&] {
    model_from_root(pipeline, placement.device, checkpoint, *comm);
    const fs::path out = args.output.empty() ? run.root() / "embeddings" : args.output;
    if (comm->is_root()) {
      std::error_code ec;
      fs::create_directories(out, ec);
      if (ec) throw Error(fmt::format("cannot create {}: {}", out.string(), ec.message()));
      std::string names;
      for (const std::string& name : info.condition_names())
        names += name + "\n";
      write_file_atomically(out / "conditions.txt", names);
    }
    std::map<Split, EmbeddingTable> tables;
    const auto table_of = [&](Split split) -> const EmbeddingTable& {
      auto it = tables.find(split);
      if (it == tables.end())
        it = tables
                 .emplace(split,
                          embed_split(pipeline, split, pipeline.trainer.eval_batch_size, *comm))
                 .first;
      return it->second;
    };
    for (Split split : args.splits) {
      const EmbeddingTable& table = table_of(split);
      if (!comm->is_root()) continue;
      const std::string name(split_name(split));
      const auto file = [&](const std::string& what) { return out / (name + "_" + what + ".npy"); };
      const Comparisons& triplets = table.triplets;
      write_tensor_npy(file("phi"), table.items.phi);
      write_tensor_npy(file("psi"), table.items.psi);
      write_tensor_npy(file("image_ids"), table.image_ids);
      write_tensor_npy(file("triplets"),
                       torch::stack({triplets.first, triplets.second, triplets.third}, 1));
      if (table.factors.defined()) write_tensor_npy(file("factors"), table.factors);
      if (triplets.conditions.defined()) write_tensor_npy(file("conditions"), triplets.conditions);
      write_row_files(*pipeline.dataset, table, out / (name + "_files.json"));
      fmt::print("{}: {} images (φ {}-D, {} ψ of {}-D), {} triplets\n", name, table.items.size(),
                 table.items.phi.size(1), table.items.psi.size(1), table.items.psi.size(2),
                 triplets.size());
    }
    EmbeddedAlignment alignment;
    const ConditionModule& module = *pipeline.condition_module;
    alignment.identity = module.supervision() == Supervision::Conditioned &&
                         module.num_embeddings() == info.num_conditions();
    if (!alignment.identity && has_alignment_evaluator(pipeline) && info.has_split(Split::Val) &&
        info.has_split(Split::Test)) {
      const EmbeddingTable& fit = table_of(Split::Val);
      const EmbeddingTable& target = table_of(Split::Test);
      if (comm->is_root()) alignment.published = published_alignments(pipeline, fit, target);
    }
    if (comm->is_root()) {
      write_file_atomically(out / "alignment.json",
                            alignment_json(pipeline, alignment).dump(2) + "\n");
      fmt::print("embeddings of {} written to {}\n", checkpoint.string(), out.string());
    }
    return 0;
  });
}

int run_export_weights(const GlobalOptions& global, const ExportWeightsArgs& args) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  const RunLock lock(run);
  // Copying tensors out needs no GPU, whichever device the run trained on.
  OpenPipeline opened = open_pipeline(global, run.resolved(), {"trainer.device=\"cpu\""});
  auto model = opened.pipeline.model();
  load_checkpoint(checkpoint, *model, nullptr, false, torch::kCPU);
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
