#include "rank_job.hpp"

#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

namespace wscsl::host {
namespace {

[[noreturn]] void end_the_process(const std::string& failure, const std::string& after_failure) {
  fmt::print(stderr, "wscsl: error: {}{}\n", failure, after_failure);
  std::fflush(nullptr);
  std::_Exit(1);
}

}  // namespace

RankJob::RankJob(const GlobalOptions& global, const World& world, JobWork work,
                 const std::filesystem::path& pipeline, const std::vector<std::string>& overrides)
    : world_(world),
      opened_(
          open_pipeline(global, pipeline, overrides, work == JobWork::Training ? world.size : 1)) {}

void RankJob::join() {
  const TrainerOptions& trainer = opened_.pipeline.trainer;
  placement_ = place(trainer, world_);
  use_threads(placement_);
  comm_ = Communicator::join(world_,
                             {std::chrono::seconds(trainer.rendezvous_timeout_s),
                              std::chrono::seconds(trainer.collective_timeout_s)},
                             placement_.collective_backend, placement_.device);
}

void RankJob::lock(const RunDirectory& run) {
  if (comm_->is_root()) lock_.emplace(run);
}

int RankJob::run(const std::function<int()>& body, const std::string& after_failure) const {
  if (comm_->size() == 1) return body();
  try {
    return body();
  } catch (const RankError& e) {
    end_the_process(e.what(), after_failure);
  } catch (const std::exception& e) {
    end_the_process(RankError(comm_->rank(), e.what()).what(), after_failure);
  }
}

std::FILE* RankJob::progress_output() const {
  if (comm_->is_root()) return stdout;
  static std::FILE* null = std::fopen("/dev/null", "w");
  return null;
}

}  // namespace wscsl::host
