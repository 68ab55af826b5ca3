#include "training_data.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl::host {
namespace {

// Streams of randomness derived from the run seed, so that data order and augmentation depend
// only on (seed, epoch, step), never on what happened before.
constexpr std::uint64_t kOrderStream = 0x6f72646572;           // "order"
constexpr std::uint64_t kAugmentStream = 0x6175676d656e74;     // "augment"
constexpr std::uint64_t kNegativeStream = 0x6e65676174697665;  // "negative"

}  // namespace

TrainingData::TrainingData(const Pipeline& pipeline, const Placement& placement, int rank)
    : pipeline_(pipeline),
      split_(pipeline.dataset->split(Split::Train)),
      count_(split_.triplets.size(0)),
      batch_size_(pipeline.trainer.batch_size),
      steps_(pipeline.trainer.drop_last ? count_ / batch_size_
                                        : (count_ + batch_size_ - 1) / batch_size_),
      conditioned_(pipeline.condition_module->supervision() == Supervision::Conditioned),
      device_(placement.device),
      rank_(rank),
      processes_(placement.processes),
      reads_ahead_(pipeline.trainer.read_ahead &&
                   (placement.device.is_cuda() || placement.threads < placement.cores)),
      reader_(reads_ahead_ ? std::make_unique<WorkerThread>("wscsl-read") : nullptr) {
  if (const std::string problem = pipeline.trainer.batch_size_problem(count_); !problem.empty())
    throw Error(problem);
  if (conditioned_ && !split_.conditions.defined())
    throw Error(fmt::format("{} trains with triplet conditions, and the training split has none",
                            pipeline.condition_module->label()));
}

TrainingData::~TrainingData() {
  drop_ahead();
}

std::int64_t TrainingData::last_batch_size() const {
  return count_ - (steps_ - 1) * batch_size_;
}

void TrainingData::start_epoch(std::int64_t epoch) {
  drop_ahead();
  const auto seed = static_cast<std::uint64_t>(pipeline_.trainer.seed);
  epoch_triplets_ =
      pipeline_.dataset->epoch_triplets(Split::Train, epoch, mix_seed(seed, kNegativeStream));
  order_ = seeded_permutation(
      mix_seed(mix_seed(seed, kOrderStream), static_cast<std::uint64_t>(epoch)), count_);
}

torch::Tensor TrainingData::batch_rows(std::int64_t step) const {
  const std::int64_t begin = step * batch_size_;
  const std::int64_t end = std::min(count_, begin + batch_size_);
  return torch::from_blob(const_cast<std::int64_t*>(order_.data()) + begin, {end - begin},
                          torch::kLong)
      .clone();
}

Shard TrainingData::shard(std::int64_t batch_size) const {
  return Shard::of(batch_size, rank_, processes_);
}

ShardBatch TrainingData::batch(std::int64_t step, std::int64_t global_step) {
  TripletBatch batch;
  if (ahead_.batch.valid() && ahead_.step == step && ahead_.global_step == global_step) {
    batch = ahead_.batch.get();  // rethrows what reading it threw
    ahead_ = Ahead{};
  } else {
    drop_ahead();
    batch = read_now(step, global_step);
  }
  if (reads_ahead_ && step + 1 < steps_) {
    ahead_.step = step + 1;
    ahead_.global_step = global_step + 1;
    ahead_.batch =
        reader_->run([this, step, global_step] { return read_now(step + 1, global_step + 1); });
  }
  const std::int64_t begin = step * batch_size_;
  return {batch.to(device_), shard(std::min(count_, begin + batch_size_) - begin)};
}

void TrainingData::drop_ahead() {
  if (ahead_.batch.valid()) ahead_.batch.wait();
  ahead_ = Ahead{};
}

TripletBatch TrainingData::read_now(std::int64_t step, std::int64_t global_step) const {
  const torch::Tensor rows = batch_rows(step);
  const Shard share = shard(rows.size(0));
  const torch::Tensor shared_rows = rows.slice(0, share.first, share.last);
  const torch::Tensor triplets = epoch_triplets_.index_select(0, shared_rows);
  const std::uint64_t seed =
      mix_seed(mix_seed(static_cast<std::uint64_t>(pipeline_.trainer.seed), kAugmentStream),
               static_cast<std::uint64_t>(global_step));
  const auto role_images = [&](std::int64_t role) {
    const ImageRequest request{true, seed,
                               static_cast<std::uint64_t>(role * share.total + share.first)};
    return pipeline_.dataset->images(Split::Train, triplets.select(1, role).contiguous(), request);
  };
  TripletBatch batch{{role_images(0), role_images(1), role_images(2)},
                     {},
                     triplet_texts(pipeline_, split_, triplets)};
  if (conditioned_) batch.conditions = split_.conditions.index_select(0, shared_rows);
  return device_.is_cuda() ? batch.pinned() : batch;
}

}  // namespace wscsl::host
