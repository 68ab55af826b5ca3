#include "run_evaluation.hpp"

#include <fmt/format.h>

#include "run/checkpoint.hpp"
#include "run/results.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

fs::path checkpoint_for_evaluation(const RunDirectory& run) {
  std::error_code ec;
  std::vector<fs::path> candidates = run.last_checkpoints();
  if (fs::exists(run.checkpoint("best"), ec))
    candidates.insert(candidates.begin(), run.checkpoint("best"));
  std::vector<std::string> skipped;
  const fs::path chosen = newest_verified(candidates, skipped);
  for (const std::string& reason : skipped)
    fmt::print(stderr, "wscsl: warning: skipped {}\n", reason);
  return chosen;
}

std::pair<RunDirectory, fs::path> run_and_checkpoint(const fs::path& target) {
  std::error_code ec;
  const bool is_file = fs::is_regular_file(target, ec);
  // A checkpoint lives in <run>/checkpoints/.
  RunDirectory run = RunDirectory::open(is_file ? target.parent_path().parent_path() : target);
  fs::path checkpoint = is_file ? target : checkpoint_for_evaluation(run);
  return {std::move(run), std::move(checkpoint)};
}

std::vector<at::Tensor> model_state(torch::nn::Module& model) {
  std::vector<at::Tensor> state = model.parameters();
  for (const at::Tensor& b : model.buffers())
    state.push_back(b);
  return state;
}

std::shared_ptr<torch::nn::Module> model_from_root(Pipeline& pipeline, const Strategy& strategy,
                                                   const fs::path& checkpoint,
                                                   TrainingState* state) {
  auto model = pipeline.model();
  if (strategy.is_root()) {
    const TrainingState loaded =
        load_checkpoint(checkpoint, *model, nullptr, false, strategy.device());
    if (state) *state = loaded;
  } else {
    model->to(strategy.device());
  }
  strategy.comm().broadcast(model_state(*model));
  return model;
}

std::optional<EvaluationResult> evaluate_run(Pipeline& pipeline, const Strategy& strategy,
                                             const RunDirectory& run, const fs::path& checkpoint) {
  TrainingState state;
  model_from_root(pipeline, strategy, checkpoint, &state);
  const std::int64_t batch = pipeline.trainer.eval_batch_size;
  const EmbeddingTable val = embed_split(pipeline, Split::Val, batch, strategy);
  const EmbeddingTable test = embed_split(pipeline, Split::Test, batch, strategy);
  if (!strategy.is_root()) return std::nullopt;
  EvaluationResult result = evaluate(pipeline, val, test, true, run.artifacts());
  std::string markdown =
      fmt::format("# Results\n\nCheckpoint `{}` (after epoch {}), pipeline `{}`.\n",
                  checkpoint.string(), state.epoch, run.resolved().string());
  markdown += format_markdown(result.tables);
  write_file_atomically(run.results_markdown(), markdown);
  RunResults results;
  results.checkpoint = checkpoint.string();
  results.epoch = state.epoch;
  for (const NamedMetric& m : result.metrics)
    results.metrics.emplace_back(m.name, m.value);
  write_results_json(run.results_json(), results);
  return result;
}

void print_evaluation(const EvaluationResult& result, const RunDirectory& run) {
  fmt::print("{}", format_text(result.tables));
  for (const fs::path& a : result.artifacts)
    fmt::print("wrote {}\n", a.string());
  fmt::print("\nresults written to {}\n", run.results_markdown().string());
}

}  // namespace wscsl::host
