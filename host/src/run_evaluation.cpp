#include "run_evaluation.hpp"

#include <fmt/format.h>

#include "checkpoint.hpp"
#include "results.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

fs::path checkpoint_for_evaluation(const RunDirectory& run) {
  std::error_code ec;
  const fs::path best = run.checkpoint("best");
  return fs::exists(best, ec) ? best : run.checkpoint("last");
}

EvaluationResult evaluate_run(Pipeline& pipeline, const RunDirectory& run,
                              const fs::path& checkpoint) {
  auto model = pipeline.model();
  const TrainingState state = load_checkpoint(checkpoint, *model, nullptr, false);
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
