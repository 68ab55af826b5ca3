#include "placement.hpp"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::host {

torch::Device resolve_device(const DeviceSetting& setting) {
  if (!trains_on_gpu(setting)) return torch::kCPU;
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(setting.index)};
}

Placement place(const TrainerOptions& trainer, const World& world) {
  Placement p;
  p.processes = world.size;
  p.nodes = world.nodes;
  p.launcher = world.launcher;
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.cores = std::max(1, hardware / std::max(1, world.local_size));
  p.threads = trainer.threads > 0 ? static_cast<int>(trainer.threads) : p.cores;
  p.timeouts = {std::chrono::seconds(trainer.rendezvous_timeout_s),
                std::chrono::seconds(trainer.collective_timeout_s)};
  p.device = resolve_device(trainer.device);
  if (world.size > 1 && p.device.is_cuda() && !p.device.has_index()) {
    // device_count() is a size_t in LibTorch 1.13 and 2.6, a c10::DeviceIndex in 2.11.
    if (static_cast<std::int64_t>(world.local_rank) >=
        static_cast<std::int64_t>(torch::cuda::device_count()))
      throw Error(fmt::format("rank {} is process {} of its machine, which has {} visible GPU(s)",
                              world.rank, world.local_rank, torch::cuda::device_count()));
    p.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
  }
  switch (trainer.collective_backend) {
    case CollectiveBackendSetting::Auto:
      p.collective_backend =
          nccl_built_in() && p.device.is_cuda() ? CollectiveBackend::Nccl : CollectiveBackend::Gloo;
      break;
    case CollectiveBackendSetting::Gloo:
      p.collective_backend = CollectiveBackend::Gloo;
      break;
    case CollectiveBackendSetting::Nccl:
      p.collective_backend = CollectiveBackend::Nccl;
      break;
  }
  return p;
}

void use_threads(const Placement& placement) {
  at::set_num_threads(placement.threads);
}

}  // namespace wscsl::host
