// c10d's NCCL backend. Its one source file is in the build only where LibTorch has CUDA and NCCL
// (nccl.cpp); elsewhere nccl_absent.cpp says why it cannot be made (host/CMakeLists.txt).
#pragma once

#include <chrono>

#include "c10d_compat.hpp"

namespace wscsl::host::nccl {

// Makes the GPU `device_index` this process's current one and returns the NCCL backend of rank
// `rank` of `size`, meeting the others through `store`. Throws Error where NCCL is not built in.
c10d_compat::Backend make_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                  int device_index, std::chrono::seconds timeout);

}  // namespace wscsl::host::nccl
