#include <torch/version.h>

#include <fmt/format.h>

#include "communicator.hpp"
#include "nccl.hpp"

namespace wscsl::host {

bool nccl_built_in() {
  return false;
}

namespace nccl {

c10d_compat::Backend make_backend(const c10::intrusive_ptr<c10d::Store>&, int, int, int,
                                  std::chrono::seconds) {
  throw Error(fmt::format(
      "NCCL is not built into this wscsl: its LibTorch ({}) is not a CUDA LibTorch 2, or NCCL's "
      "headers were not found when it was configured (docs/distributed.md)",
      TORCH_VERSION));
}

}  // namespace nccl
}  // namespace wscsl::host
