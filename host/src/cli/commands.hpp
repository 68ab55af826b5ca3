// The `wscsl` subcommands. Each returns the process exit status; errors propagate as exceptions
// that main() turns into one message and a status (2: configuration, 3: plugins, 1: otherwise).
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "distributed/world.hpp"
#include "pipeline/session.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl::host {

struct TrainArgs {
  std::filesystem::path pipeline;  // empty when resuming
  std::filesystem::path run_dir;   // --run-dir, or the run to --resume
  bool resume = false;
  std::vector<std::string> overrides;
  std::int64_t stop_after_steps = 0;
};
// With several processes (`world`), each trains on its share of every batch and rank 0 writes.
int run_train(const GlobalOptions& global, const TrainArgs& args, const World& world);
// Builds and checks the pipeline `args` trains for `processes` processes (throws ConfigError).
void check_training(const GlobalOptions& global, const TrainArgs& args, int processes);
// runs/<pipeline>-<local time>: where a run goes without --run-dir.
std::filesystem::path default_run_directory(const std::filesystem::path& pipeline);

struct EvalArgs {
  std::filesystem::path target;  // a run directory or a checkpoint inside one
  std::vector<std::string> overrides;
};
// With several processes, each embeds a share of the images and rank 0 evaluates.
int run_eval(const GlobalOptions& global, const EvalArgs& args, const World& world);

struct EmbedArgs {
  std::filesystem::path target;  // a run directory or a checkpoint inside one
  std::vector<Split> splits = {Split::Test};
  std::filesystem::path output;  // default: <run>/embeddings
  std::vector<std::string> overrides;
};
// Writes, per split, <split>_phi.npy [M, D], <split>_psi.npy [M, K, E] (every ψ_k),
// <split>_image_ids.npy [M], <split>_factors.npy [M, F] and <split>_triplets.npy [T, 3] (row
// indices) with <split>_conditions.npy [T] where the split has them, <split>_files.json (the image
// file of each row, for a dataset of image files), conditions.txt (the factor columns' names, one
// a line) and alignment.json (which ψ_k serves each condition: the identity of a conditioned
// module with one embedding per condition, else the alignment evaluators' fit on the validation
// split).
int run_embed(const GlobalOptions& global, const EmbedArgs& args, const World& world);

struct ExportWeightsArgs {
  std::filesystem::path target;  // a run directory or a checkpoint inside one
  std::filesystem::path output;
  bool list = false;  // also print every tensor's name and shape
};
// Writes the checkpoint's parameters and buffers as a plain dict of tensors that torch.load reads
// in Python, named <component>.<the plugin's own names> (backbone.…, condition_module.…,
// loss_<i>.…).
int run_export_weights(const GlobalOptions& global, const ExportWeightsArgs& args);

// Builds and checks the pipeline, then probes its components on a few triplets (probe.hpp), but
// for the kinds in `skip_probe`.
int run_check(const GlobalOptions& global, const std::filesystem::path& pipeline,
              const std::vector<std::string>& overrides, const std::set<Kind>& skip_probe);
// The dataset of a pipeline file (every component is built, so the file is checked whole).
struct DatasetArgs {
  std::filesystem::path pipeline;
  std::vector<std::string> overrides;
};
struct MakeTripletsOptions;
int run_make_triplets(const GlobalOptions& global, const DatasetArgs& args,
                      const MakeTripletsOptions& options);
int run_export(const GlobalOptions& global, const DatasetArgs& args,
               const std::filesystem::path& out);

int run_plugins(const GlobalOptions& global, bool json);
enum class DescribeFormat { Text, Json, Markdown };
int run_describe(const GlobalOptions& global, const std::string& what, DescribeFormat format);

}  // namespace wscsl::host
