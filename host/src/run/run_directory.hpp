// The files of one training run:
//   resolved.toml  metrics.jsonl  curves.png  steps.tsv  checkpoints/{last,best}.pt  results.md
//   results.json  plots/  replicas.tsv  events.out.tfevents.*  lock  job.json
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace wscsl::host {

class RunDirectory {
 public:
  explicit RunDirectory(std::filesystem::path root) : root_(std::move(root)) {}

  // Creates a run directory; refuses one that holds a run with a checkpoint (nothing trained is
  // overwritten). A run that stopped before its first checkpoint left nothing to keep: it is
  // trained again (resumable() empties its logs).
  static RunDirectory create(const std::filesystem::path& root);
  // Opens an existing run; throws Error naming what is missing.
  static RunDirectory open(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path resolved() const { return root_ / "resolved.toml"; }
  std::filesystem::path checkpoint(const std::string& name) const {
    return root_ / "checkpoints" / (name + ".pt");
  }
  // The `last` checkpoints on disk, newest first: last.pt, then the older last.1.pt, last.2.pt, …
  std::vector<std::filesystem::path> last_checkpoints() const;
  // Makes room for a new last.pt so that `keep` `last` checkpoints exist once it is written:
  // last.pt becomes last.1.pt, last.1.pt last.2.pt, …, and the oldest beyond `keep` go.
  void rotate_last(std::int64_t keep) const;
  std::filesystem::path metrics() const { return root_ / "metrics.jsonl"; }
  std::filesystem::path steps() const { return root_ / "steps.tsv"; }
  std::filesystem::path results_markdown() const { return root_ / "results.md"; }
  std::filesystem::path results_json() const { return root_ / "results.json"; }
  std::filesystem::path artifacts() const { return root_ / "plots"; }
  std::filesystem::path curves() const { return root_ / "curves.png"; }
  // With several processes: per epoch, the SHA-256 of each process's parameters.
  std::filesystem::path replicas() const { return root_ / "replicas.tsv"; }
  // The job that writes the run (run_job.hpp).
  std::filesystem::path job() const { return root_ / "job.json"; }

  // Keeps only what a checkpoint at (`epochs_done` completed epochs, `global_step`) covers, so a
  // resumed run appends exactly where the checkpoint left off.
  void truncate_logs(std::int64_t epochs_done, std::int64_t global_step) const;

 private:
  std::filesystem::path root_;
};

// Held while a command writes into a run directory: an advisory flock on <run>/lock, which the
// kernel releases when the process ends, however it ends. A second writer is refused with one
// sentence naming the holder's process.
class RunLock {
 public:
  explicit RunLock(const RunDirectory& run);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Throws the error that names `resume_command` (e.g. "wscsl train --resume runs/p") when `run`
// holds a checkpoint.
void refuse_a_run_with_checkpoints(const RunDirectory& run, const std::string& resume_command);

// Whether `run` has a checkpoint to resume from. A run stopped before its first checkpoint has
// none: its logs are emptied so that it trains again from step 0.
bool resumable(const RunDirectory& run);

}  // namespace wscsl::host
