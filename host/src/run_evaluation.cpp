#include "run_evaluation.hpp"

#include <fmt/format.h>

#include "checkpoint.hpp"
#include "results.hpp"
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

EvaluationResult evaluate_run(Pipeline& pipeline, const RunDirectory& run,
                              const fs::path& checkpoint) {
  auto model = pipeline.model();
  const TrainingState state =
      load_checkpoint(checkpoint, *model, nullptr, false, pipeline.trainer.resolved_device());
  EvaluationResult result = evaluate_test(pipeline, run.artifacts());
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

}  // namespace wscsl::host
