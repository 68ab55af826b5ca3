// The final evaluation of a trained run: which checkpoint, and the results files it writes.
#pragma once

#include <filesystem>

#include "evaluation.hpp"
#include "pipeline.hpp"
#include "run_directory.hpp"

namespace wscsl::host {

// The checkpoint evaluation should use: `best` when the run selects one, else the newest `last`;
// one that does not verify is skipped with a warning saying why.
std::filesystem::path checkpoint_for_evaluation(const RunDirectory& run);

// Evaluates `checkpoint` on the test split and writes results.md and results.json.
EvaluationResult evaluate_run(Pipeline& pipeline, const RunDirectory& run,
                              const std::filesystem::path& checkpoint);

}  // namespace wscsl::host
