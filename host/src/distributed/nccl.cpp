#include "nccl.hpp"

#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "communicator.hpp"

namespace wscsl::host {

bool nccl_built_in() {
  return true;
}

namespace nccl {

c10d_compat::Backend make_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                  int device_index, std::chrono::seconds timeout) {
  // NCCL's communicator is made on the current device, and the first collective would otherwise
  // make every rank's CUDA context on GPU 0 as well.
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(device_index));
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  // Its own key space: Gloo's rendezvous uses the same store.
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("nccl/", store);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank, size, options);
}

}  // namespace nccl
}  // namespace wscsl::host
