// `wscsl embed`: the embeddings of a trained run's splits as .npy files, with what names their rows
// and which embedding serves each condition, alone or as one process of a data-parallel job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"
#include "nproc_option.hpp"

namespace wscsl::host {

class EmbedCommand final : public Command {
 public:
  explicit EmbedCommand(CLI::App& app);
  bool data_parallel() const override { return true; }
  // Writes, per split, <split>_phi.npy [M, D], <split>_psi.npy [M, K, E] (every ψ_k),
  // <split>_image_ids.npy [M], <split>_factors.npy [M, F] and <split>_triplets.npy [T, 3] (row
  // indices) with <split>_conditions.npy [T] where the split has them, <split>_files.json (the
  // image file of each row, for a dataset of image files), conditions.txt (the factor columns'
  // names, one a line) and alignment.json (which ψ_k serves each condition: the identity of a
  // conditioned module with one embedding per condition, else the alignment evaluators' fit on
  // the validation split). With several processes, each embeds a share of the images.
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path target_;  // a run directory or a checkpoint inside one
  std::vector<std::string> splits_;
  std::filesystem::path output_;  // default: <run>/embeddings
  std::vector<std::string> overrides_;
  NprocOption nproc_;
};

}  // namespace wscsl::host
