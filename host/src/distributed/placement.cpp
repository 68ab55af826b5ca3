#include "placement.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>
#include <torch/cuda.h>

#include "wscsl/error.hpp"

namespace wscsl::host {

Placement place(const TrainerOptions& trainer, const World& world) {
  Placement p;
  p.processes = world.size;
  p.nodes = world.nodes;
  p.launcher = world.launcher;
  p.threads = trainer.resolved_threads();
  if (trainer.threads == 0 && world.local_size > 1)
    p.threads = std::max(1, p.threads / world.local_size);
  p.device = trainer.resolved_device();
  if (world.size > 1 && p.device.is_cuda() && !p.device.has_index()) {
    // device_count() is a size_t in LibTorch 1.13 and 2.6, a c10::DeviceIndex in 2.11.
    if (static_cast<std::int64_t>(world.local_rank) >=
        static_cast<std::int64_t>(torch::cuda::device_count()))
      throw Error(fmt::format("rank {} is process {} of its machine, which has {} visible GPU(s)",
                              world.rank, world.local_rank, torch::cuda::device_count()));
    p.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
  }
  p.collective_backend = trainer.resolved_collective_backend();
  return p;
}

}  // namespace wscsl::host
