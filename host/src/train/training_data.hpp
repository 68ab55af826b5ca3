// The training split as the trainer reads it: the triplets in the order of each epoch, which
// depends on the seed and the epoch only, cut into batches; and the images of a share of a batch,
// augmented by their position in the whole batch, so that the augmentation does not depend on how
// many processes share it. The next batch can be read ahead on a background thread while the step
// trains on this one; for a GPU the batches are read into page-locked memory, which the GPU copies
// from while the host goes on.
#pragma once

#include <cstdint>
#include <future>
#include <vector>

#include "distributed/shard.hpp"
#include "pipeline/pipeline.hpp"
#include "training_step.hpp"

namespace wscsl::host {

class TrainingData {
 public:
  // The data of process `rank` of a job of `processes`, which reads its shard of every batch and
  // returns it on `device` (for a GPU it is read into page-locked memory first). Throws Error when
  // trainer.batch_size exceeds the split, or when the condition module trains with conditions and
  // the split has none.
  TrainingData(const Pipeline& pipeline, torch::Device device, int rank, int processes);
  // Waits for a batch being read ahead.
  ~TrainingData();

  std::int64_t steps_per_epoch() const { return steps_; }
  // The triplets of an epoch's last batch, its smallest.
  std::int64_t last_batch_size() const;

  // The rows of the split in the order of `epoch`; read() then reads the triplets of that epoch
  // (Dataset::epoch_triplets: the same every epoch unless the dataset draws negatives afresh).
  std::vector<std::int64_t> start_epoch(std::int64_t epoch);
  // The rows of batch `step` of an epoch in `order`.
  torch::Tensor batch_rows(const std::vector<std::int64_t>& order, std::int64_t step) const;
  // This process's shard of a batch of `batch_size` triplets.
  Shard shard(std::int64_t batch_size) const;
  // This process's shard of the batch of `rows`, for global step `global_step` (which seeds its
  // augmentation), on the device: the batch read ahead when it is this one, else read now.
  TripletBatch read(const torch::Tensor& rows, std::int64_t global_step);
  // Starts reading this process's shard of batch `step` of the epoch started last, for global step
  // `global_step`, on a background thread. The dataset must not be used otherwise meanwhile: the
  // trainer reads ahead only within an epoch, and the next read() or start_epoch() takes it.
  void read_ahead(std::int64_t step, std::int64_t global_step);

 private:
  struct Ahead {
    torch::Tensor rows;
    std::int64_t global_step = -1;
    std::future<TripletBatch> batch;
  };

  TripletBatch read_now(const torch::Tensor& rows, std::int64_t global_step) const;
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
};

}  // namespace wscsl::host
