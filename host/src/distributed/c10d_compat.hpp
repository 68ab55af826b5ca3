// The c10d calls that differ between the LibTorch versions wscsl builds against. LibTorch 1.13
// (Debian 12) and 2.6 (Debian 13) are built and tested (docs/distributed.md); the branch for
// LibTorch 2.0 to 2.5 is written against their headers and has never been compiled here.
#pragma once

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>

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

// The process group the Reducer and the collectives take. LibTorch 1.13's Gloo group is one;
// LibTorch 2 splits a process group from its backends.
inline c10::intrusive_ptr<c10d::ProcessGroup> process_group(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo, std::chrono::seconds timeout) {
#if TORCH_VERSION_MAJOR >= 2
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 6
  (void)timeout;
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size);
#else
  auto group = c10::make_intrusive<c10d::ProcessGroup>(
      store, rank, size, c10::make_intrusive<c10d::ProcessGroup::Options>("gloo", timeout));
#endif
  // Gloo reduces CUDA tensors too (through host memory).
  for (const c10::DeviceType device : {c10::DeviceType::CPU, c10::DeviceType::CUDA})
    group->setBackend(device, c10d::ProcessGroup::BackendType::GLOO, gloo);
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  return group;
#else
  (void)store, (void)rank, (void)size, (void)timeout;
  return gloo;
#endif
}

}  // namespace wscsl::host::c10d_compat
