// One process's part in a job, composed in one place — what Lightning's Strategy owns: where it
// computes (its placement, resolved once from [trainer] and the job's shape, with LibTorch's
// threads set once), whom it reduces with (its communicator, whose rank and size give the process
// its Shard of every batch and split), and the precision of its training forward. `World` stays
// the value the launcher described. Train, eval and embed (through the command's RankJob), search
// and the one-process train() make it; the training loop, the evaluation of a run and the
// embedding of a split take it whole.
#pragma once

#include <cstdint>
#include <memory>

#include "communicator.hpp"
#include "placement.hpp"
#include "shard.hpp"

namespace wscsl::host {

class Strategy {
 public:
  // Process `world.rank` of `world`: places it as `trainer` says, sets its threads and joins the
  // job's other processes as its placement says (a one-process world joins none).
  Strategy(const TrainerOptions& trainer, const World& world);

  const Placement& placement() const { return placement_; }
  torch::Device device() const { return placement_.device; }
  const Communicator& comm() const { return *comm_; }
  int rank() const { return comm_->rank(); }
  int processes() const { return comm_->size(); }
  bool is_root() const { return comm_->is_root(); }
  Precision precision() const { return precision_; }
  // This process's part of `total` things (a batch's triplets, a split's images).
  Shard shard(std::int64_t total) const { return Shard::of(total, rank(), processes()); }

 private:
  Placement placement_;
  Precision precision_;
  std::unique_ptr<Communicator> comm_;
};

}  // namespace wscsl::host
