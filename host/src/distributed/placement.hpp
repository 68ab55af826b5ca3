// Where a process of a job computes: its device, its threads, the job's processes and how they
// reduce. Resolved once, when the process joins its job, from [trainer] and the job's shape, and
// given as one value to the training loop, data parallelism, evaluation and export; resolved.toml's
// [provenance] records it. [trainer] itself stays as the pipeline wrote it.
#pragma once

#include <torch/types.h>

#include "communicator.hpp"
#include "pipeline/trainer_options.hpp"
#include "world.hpp"

namespace wscsl::host {

struct Placement {
  torch::Device device{torch::kCPU};
  int threads = 1;
  int processes = 1;                   // of the job
  int nodes = 1;                       // machines of the job
  Launcher launcher = Launcher::None;  // what started the job's processes
  CollectiveBackend collective_backend = CollectiveBackend::Gloo;
};

// The placement of this process of `world`. The processes of one machine share it: with
// trainer.threads at 0 each takes its cores ÷ N, and where "cuda" or "auto" names no GPU each
// takes GPU LOCAL_RANK, as torchrun's users do with torch.cuda.set_device(local_rank). Throws
// Error when that GPU is not visible.
Placement place(const TrainerOptions& trainer, const World& world);

}  // namespace wscsl::host
