// The c10d calls that differ between the LibTorch versions wscsl builds against. LibTorch 1.13
// (Debian 12) and 2.6 (Debian 13) are built and tested, and 2.11 (a PyTorch wheel) by the GPU
// check (docs/distributed.md); the branch for LibTorch 2.0 to 2.5 is written against their
// headers and has never been compiled here.
#pragma once

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace wscsl::host::c10d_compat {

// LibTorch 2.4 and later serve the rendezvous with libuv by default, which Debian's LibTorch is
// built without; the plain TCP server, the only one before 2.2, is in every build. (Overloads
// rather than a version test: useLibUV exists from 2.2 on.)
template <typename Options>
auto serve_without_libuv(Options& options, int) -> decltype(void(options.useLibUV = false)) {
  options.useLibUV = false;
}
template <typename Options>
void serve_without_libuv(Options&, long) {}

#if TORCH_VERSION_MAJOR >= 2
using Backend = c10::intrusive_ptr<c10d::Backend>;
#else
using Backend = c10::intrusive_ptr<c10d::ProcessGroup>;
#endif

// The process group the Reducer and the collectives take: Gloo for CPU tensors, `cuda` (NCCL; null:
// Gloo) for CUDA tensors. LibTorch 1.13's Gloo group is one; LibTorch 2 splits a process group
// from its backends and sends each tensor to its device's. NCCL is built only against LibTorch 2
// (host/CMakeLists.txt), so `cuda` is null with 1.13.
inline c10::intrusive_ptr<c10d::ProcessGroup> process_group(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo, Backend cuda, std::chrono::seconds timeout) {
#if TORCH_VERSION_MAJOR >= 2
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 6
  (void)timeout;
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size);
#else
  auto group = c10::make_intrusive<c10d::ProcessGroup>(
      store, rank, size, c10::make_intrusive<c10d::ProcessGroup::Options>("gloo", timeout));
#endif
  group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
  if (cuda)
    group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, cuda);
  else  // Gloo reduces CUDA tensors too (through host memory).
    group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::GLOO, gloo);
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  return group;
#else
  (void)store, (void)rank, (void)size, (void)cuda, (void)timeout;
  return gloo;
#endif
}

// DDP's Reducer over `buckets` (indices into `parameters`, each bucket at most `limits` bytes),
// every parameter dense and used in every step, each gradient a view into its bucket (DDP's
// gradient_as_bucket_view: backward accumulates into the bucket, and nothing is copied). Its
// constructor changed twice: up to LibTorch 2.6 it takes the bucket limits; later ones drop them
// and take skip_all_reduce_unused_params and use_python_reducer, and 2.11 the byte caps of the
// buckets a rebuild makes. (Detected rather than versioned: `Reducer` is a template parameter
// so that only the matching branch is compiled.)
template <typename Reducer = c10d::Reducer>
std::unique_ptr<Reducer> make_reducer(std::vector<at::Tensor> parameters,
                                      std::vector<std::vector<std::size_t>> buckets,
                                      std::vector<std::size_t> limits,
                                      c10::intrusive_ptr<c10d::ProcessGroup> group,
                                      std::unordered_map<std::size_t, std::string> names) {
  using Indices = std::vector<std::vector<std::size_t>>;
  using Group = c10::intrusive_ptr<c10d::ProcessGroup>;
  using Names = std::unordered_map<std::size_t, std::string>;
  std::vector<bool> dense(parameters.size(), false);
  const std::int64_t cap = c10d::kDefaultBucketBytesCap;
  const std::int64_t first_cap = c10d::kDefaultFirstBucketBytes;
  const bool find_unused = false, gradient_as_bucket_view = true;
  if constexpr (std::is_constructible_v<Reducer, std::vector<at::Tensor>, Indices,
                                        std::vector<std::size_t>, Group, std::vector<bool>,
                                        std::int64_t, bool, bool, Names, std::int64_t>) {
    return std::make_unique<Reducer>(std::move(parameters), std::move(buckets), std::move(limits),
                                     std::move(group), std::move(dense), cap, find_unused,
                                     gradient_as_bucket_view, std::move(names), first_cap);
  } else {
    const bool skip_all_reduce_unused = false, python_reducer = false;
    if constexpr (std::is_constructible_v<Reducer, std::vector<at::Tensor>, Indices, Group,
                                          std::vector<bool>, std::int64_t, bool, bool, Names,
                                          std::int64_t, bool, bool>)
      return std::make_unique<Reducer>(std::move(parameters), std::move(buckets), std::move(group),
                                       std::move(dense), cap, find_unused, gradient_as_bucket_view,
                                       std::move(names), first_cap, skip_all_reduce_unused,
                                       python_reducer);
    else
      return std::make_unique<Reducer>(std::move(parameters), std::move(buckets), std::move(group),
                                       std::move(dense), cap, find_unused, gradient_as_bucket_view,
                                       std::move(names), first_cap, skip_all_reduce_unused,
                                       python_reducer, std::vector<std::int64_t>{first_cap, cap});
  }
}

}  // namespace wscsl::host::c10d_compat
