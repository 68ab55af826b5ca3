// One process of the job a command runs as (train, eval, embed): its pipeline, built for the job's
// processes; its strategy (placement, communicator, precision, shard), once it joins; on rank 0,
// the lock of the run directory it writes into; and the run of the command's body, which names
// this process's failure.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/strategy.hpp"
#include "distributed/world.hpp"
#include "pipeline/session.hpp"
#include "run/run_directory.hpp"

namespace wscsl::host {

// What the processes of a job share: the batches of training, which must divide among them, or
// only the images they embed, which any number of processes can share.
enum class JobWork { Training, Embedding };

class RankJob {
 public:
  // Opens `pipeline` with `overrides` for `work` by the processes of `world`.
  RankJob(const GlobalOptions& global, const World& world, JobWork work,
          const std::filesystem::path& pipeline, const std::vector<std::string>& overrides);

  // Joins the job's other processes through its strategy, made from [trainer]. Checks that need
  // no other process belong before.
  void join();
  // On rank 0, locks `run` until the job ends; the other processes write nothing into it.
  void lock(const RunDirectory& run);
  // Runs `body` and returns its status. With several processes a failure ends this process at once
  // with one message naming its rank followed by `after_failure`, so that the others see the lost
  // connection and stop too instead of waiting out a collective that cannot complete; rank 0's
  // checkpoints are committed atomically, so nothing saved is lost.
  int run(const std::function<int()>& body, const std::string& after_failure = {}) const;

  Pipeline& pipeline() { return opened_.pipeline; }
  const World& world() const { return world_; }
  // After join().
  const Strategy& strategy() const { return *strategy_; }
  const Placement& placement() const { return strategy_->placement(); }
  bool is_root() const { return strategy_->is_root(); }
  // Where this process's progress goes: only rank 0 reports.
  std::FILE* progress_output() const;

 private:
  World world_;
  OpenPipeline opened_;
  std::unique_ptr<Strategy> strategy_;
  std::optional<RunLock> lock_;
};

}  // namespace wscsl::host
