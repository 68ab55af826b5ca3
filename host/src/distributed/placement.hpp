// Where a process of a job computes: its device, its threads, the job's processes and how they
// reduce, and how long it waits for the others. Resolved once, when the process joins its job, from
// [trainer] and the job's shape, and given as one value to the training loop, data parallelism,
// evaluation and export; resolved.toml's [provenance] records it. [trainer] itself stays as the
// pipeline wrote it.
#pragma once

#include <torch/types.h>

#include "communicator.hpp"
#include "pipeline/trainer_options.hpp"
#include "world.hpp"

namespace wscsl::host {

struct Placement {
  torch::Device device{torch::kCPU};
  int threads = 1;                     // LibTorch's intra-op threads of this process
  int cores = 1;                       // this process's share of its machine's hardware threads
  int processes = 1;                   // of the job
  int nodes = 1;                       // machines of the job
  Launcher launcher = Launcher::None;  // what started the job's processes
  CollectiveBackend collective_backend = CollectiveBackend::Gloo;
  JoinTimeouts timeouts{};  // trainer.rendezvous_timeout_s and collective_timeout_s
};

// The placement of this process of `world`. The processes of one machine share its cores: with
// trainer.threads at 0 each takes its cores ÷ N, and where "cuda" or "auto" names no GPU each
// takes GPU LOCAL_RANK, as torchrun's users do with torch.cuda.set_device(local_rank). The
// collectives of CUDA tensors go through NCCL where "auto" finds it built in and the device is a
// GPU. Throws Error when that GPU is not visible.
Placement place(const TrainerOptions& trainer, const World& world);

// The device `setting` names, "auto" resolved to CUDA when LibTorch has it and a GPU is visible,
// else the CPU (the schema has checked that it exists).
torch::Device resolve_device(const DeviceSetting& setting);

// Sets LibTorch's thread count of this process to the placement's: the host's one place that
// does, called once per process by its Strategy (when it joins its job, or opens a run to search
// it), after the pipeline is built and before the model trains or embeds. Building does not depend
// on it: the parameters' random initialisation runs on one thread whatever the count.
void use_threads(const Placement& placement);

}  // namespace wscsl::host
