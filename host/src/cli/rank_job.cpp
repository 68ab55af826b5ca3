#include "rank_job.hpp"

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
  strategy_ = std::make_unique<Strategy>(opened_.pipeline.trainer, world_);
}

void RankJob::lock(const RunDirectory& run) {
  if (strategy_->is_root()) lock_.emplace(run);
}

int RankJob::run(const std::function<int()>& body, const std::string& after_failure) const {
  if (strategy_->processes() == 1) return body();
  try {
    return body();
  } catch (const RankError& e) {
    end_the_process(e.what(), after_failure);
  } catch (const std::exception& e) {
    end_the_process(RankError(strategy_->rank(), e.what()).what(), after_failure);
  }
}

std::FILE* RankJob::progress_output() const {
  if (strategy_->is_root()) return stdout;
  static std::FILE* null = std::fopen("/dev/null", "w");
  return null;
}

}  // namespace wscsl::host
