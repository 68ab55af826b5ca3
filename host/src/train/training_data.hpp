// The training split as the trainer reads it: the triplets in the order of each epoch, which
// depends on the seed and the epoch only, cut into batches; and the images of a share of a batch,
// augmented by their position in the whole batch, so that the augmentation does not depend on how
// many processes share it. The next batch can be read ahead on a background thread (one for the
// life of the data, named "wscsl-read") while the step trains on this one; for a GPU the batches
// are read into page-locked memory, which the GPU copies from while the host goes on.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <vector>

#include "distributed/placement.hpp"
#include "distributed/shard.hpp"
#include "pipeline/pipeline.hpp"
#include "training_step.hpp"
#include "worker_thread.hpp"

namespace wscsl::host {

// A batch as one process trains on it: its share of the triplets, on the device, and which share
// of the whole batch that is.
struct ShardBatch {
  TripletBatch batch;
  Shard share;
};

class TrainingData {
 public:
  // The data of process `rank` of the job `placement` describes, which reads its shard of every
  // batch and returns it on the placement's device (for a GPU it is read into page-locked memory
  // first). Throws Error when trainer.batch_size exceeds the split, or when the condition module
  // trains with conditions and the split has none.
  TrainingData(const Pipeline& pipeline, const Placement& placement, int rank);
  // Waits for a batch being read ahead.
  ~TrainingData();

  std::int64_t steps_per_epoch() const { return steps_; }
  // The triplets of an epoch's last batch, its smallest.
  std::int64_t last_batch_size() const;
  // Whether the next batch is read on a background thread while the step trains on this one:
  // trainer.read_ahead, where the step leaves that thread a core — it computes on a GPU, or on
  // fewer threads than the process's cores. A reading thread beside a step that takes every core
  // makes the step's threads wait for one another at each parallel region (docs/benchmarks.md).
  bool reads_ahead() const { return reads_ahead_; }

  // Starts epoch `epoch`: its order of the split depends on the seed and the epoch only, and its
  // triplets are Dataset::epoch_triplets (the same every epoch unless the dataset draws
  // negatives afresh).
  void start_epoch(std::int64_t epoch);
  // This process's shard of batch `step` of the epoch started last, for global step `global_step`
  // (which seeds its augmentation), on the device: the batch read ahead when it is this one, else
  // read now. Where it reads ahead, it then starts reading the epoch's next batch.
  ShardBatch batch(std::int64_t step, std::int64_t global_step);

 private:
  struct Ahead {
    std::int64_t step = -1;
    std::int64_t global_step = -1;
    std::future<TripletBatch> batch;
  };

  // The rows of batch `step` of the epoch started last.
  torch::Tensor batch_rows(std::int64_t step) const;
  Shard shard(std::int64_t batch_size) const;
  TripletBatch read_now(std::int64_t step, std::int64_t global_step) const;
  // Waits for the batch read ahead, if any, and forgets it.
  void drop_ahead();

  const Pipeline& pipeline_;
  const SplitData& split_;
  torch::Tensor epoch_triplets_;
  std::vector<std::int64_t> order_;  // of the epoch started last
  Ahead ahead_;
  std::int64_t count_;
  std::int64_t batch_size_;
  std::int64_t steps_;
  bool conditioned_;
  torch::Device device_;
  int rank_;
  int processes_;
  bool reads_ahead_;
  std::unique_ptr<WorkerThread> reader_;  // where it reads ahead
};

}  // namespace wscsl::host
