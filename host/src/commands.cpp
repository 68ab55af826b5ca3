#include "commands.hpp"

#include <csignal>

#include <fmt/format.h>

#include "clock.hpp"
#include "npy.hpp"
#include "pipeline.hpp"
#include "run_evaluation.hpp"
#include "trainer.hpp"
#include "triplet_files.hpp"
#include "wscsl/error.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

extern "C" void on_stop_signal(int) {
  request_stop();
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
  std::signal(SIGTERM, SIG_DFL);
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

int run_train(const GlobalOptions& global, const TrainArgs& args) {
  fs::path run_root = args.run_dir;
  fs::path source = args.pipeline;
  if (args.resume) source = RunDirectory::open(run_root).resolved();
  OpenPipeline opened = open_pipeline(global, source, args.overrides);
  Pipeline& pipeline = opened.pipeline;
  if (run_root.empty())
    run_root = fs::path("runs") /
               (source.stem().string() + "-" + now_text("%Y%m%d-%H%M%S", TimeZone::Local));
  const RunDirectory run =
      args.resume ? RunDirectory::open(run_root) : RunDirectory::create(run_root);
  const RunLock lock(run);
  TrainRequest request;
  request.resume = args.resume && resumable(run);
  if (args.resume && !request.resume)
    fmt::print("{} stopped before its first checkpoint: training it again from step 0\n",
               run.root().string());
  fmt::print("run {} — {} threads, seed {}, device {}\n", run.root().string(),
             pipeline.trainer.resolved_threads(), pipeline.trainer.seed,
             pipeline.trainer.resolved_device().str());
  install_stop_handlers();
  request.stop_after_steps = args.stop_after_steps;
  const TrainResult result = train(pipeline, run, request);
  if (result.outcome == TrainOutcome::Interrupted) return 130;
  if (result.test) {
    print_results(*result.test);
    fmt::print("\nresults written to {}\n", run.results_markdown().string());
  }
  return 0;
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

int run_eval(const GlobalOptions& global, const EvalArgs& args) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  const RunLock lock(run);
  OpenPipeline opened = open_pipeline(global, run.resolved(), args.overrides);
  Pipeline& pipeline = opened.pipeline;
  const EvaluationResult result = evaluate_run(pipeline, run, checkpoint);
  print_results(result);
  fmt::print("\nresults written to {}\n", run.results_markdown().string());
  return 0;
}

int run_embed(const GlobalOptions& global, const EmbedArgs& args) {
  const auto [run, checkpoint] = run_and_checkpoint(args.target);
  const RunLock lock(run);
  OpenPipeline opened = open_pipeline(global, run.resolved(), args.overrides);
  Pipeline& pipeline = opened.pipeline;
  const DatasetInfo info = pipeline.dataset->info();
  for (const std::string& split : args.splits)
    if (!info.has_split(split))
      throw Error(fmt::format("{} has no split '{}' (it has: {})", pipeline.dataset->label(), split,
                              join(info.splits, ", ")));
  auto model = pipeline.model();
  load_checkpoint(checkpoint, *model, nullptr, false, pipeline.trainer.resolved_device());
  const fs::path out = args.output.empty() ? run.root() / "embeddings" : args.output;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", out.string(), ec.message()));
  std::string names;
  for (const std::string& name : info.condition_names())
    names += name + "\n";
  write_file_atomically(out / "conditions.txt", names);
  for (const std::string& split : args.splits) {
    const EmbeddingTable table = embed_split(pipeline, split, pipeline.trainer.eval_batch_size);
    const auto file = [&](const std::string& what) { return out / (split + "_" + what + ".npy"); };
    write_npy(file("phi"), table.phi);
    write_npy(file("psi"), table.psi);
    write_npy(file("image_ids"), table.image_ids);
    write_npy(file("triplets"), table.triplets);
    if (table.factors.defined()) write_npy(file("factors"), table.factors);
    if (table.conditions.defined()) write_npy(file("conditions"), table.conditions);
    fmt::print("{}: {} images (φ {}-D, {} ψ of {}-D), {} triplets\n", split, table.phi.size(0),
               table.phi.size(1), table.psi.size(1), table.psi.size(2), table.triplets.size(0));
  }
  fmt::print("embeddings of {} written to {}\n", checkpoint.string(), out.string());
  return 0;
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
              const std::vector<std::string>& overrides) {
  const OpenPipeline opened = open_pipeline(global, path, overrides);
  const Pipeline& p = opened.pipeline;
  fmt::print("{}: pipeline is valid\n", path.string());
  fmt::print("  dataset           {}\n", p.dataset->label());
  fmt::print("  backbone          {}\n", p.backbone->label());
  fmt::print("  condition_module  {}\n", p.condition_module->label());
  for (const WeightedLoss& l : p.losses)
    fmt::print("  loss              {} × {}\n", l.weight, l.loss->label());
  for (const NamedEvaluator& e : p.evaluators)
    fmt::print("  evaluator         {} ({})\n", e.name, e.evaluator->label());
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
