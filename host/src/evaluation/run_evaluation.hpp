// The final evaluation of a trained run: which checkpoint, and the results files it writes.
#pragma once

#include <filesystem>
#include <optional>
#include <utility>

#include "distributed/strategy.hpp"
#include "evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"

namespace wscsl::host {

// The checkpoint evaluation should use: `best` when the run selects one, else the newest `last`;
// one that does not verify is skipped with a warning saying why.
std::filesystem::path checkpoint_for_evaluation(const RunDirectory& run);
// The run of `target`, a run directory or a checkpoint file inside it, and the checkpoint to use:
// that file, else checkpoint_for_evaluation's.
std::pair<RunDirectory, std::filesystem::path> run_and_checkpoint(
    const std::filesystem::path& target);

// Evaluates `checkpoint` on the test split and writes results.md and results.json, as the
// processes of `strategy` share it: rank 0 reads `checkpoint` (the others pass an empty path) and
// sends its weights to every process, each embeds its shard of the images on its device, and rank
// 0 evaluates, writes and returns the results; the other processes return nothing.
std::optional<EvaluationResult> evaluate_run(Pipeline& pipeline, const Strategy& strategy,
                                             const RunDirectory& run,
                                             const std::filesystem::path& checkpoint);

// Prints the tables of `result`, the files it wrote, and where `run`'s results are.
void print_evaluation(const EvaluationResult& result, const RunDirectory& run);

// The model's parameters and buffers, in one order on every process.
std::vector<at::Tensor> model_state(torch::nn::Module& model);

// The pipeline's model on the device of `strategy` with the weights of `checkpoint`, which rank 0
// reads (the others pass an empty path) and sends to every process; rank 0 also fills `state`.
std::shared_ptr<torch::nn::Module> model_from_root(Pipeline& pipeline, const Strategy& strategy,
                                                   const std::filesystem::path& checkpoint,
                                                   TrainingState* state = nullptr);

}  // namespace wscsl::host
