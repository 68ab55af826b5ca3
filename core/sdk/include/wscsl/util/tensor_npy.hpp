// A tensor as a NumPy .npy file (wscsl/data/npy.hpp writes it).
#pragma once

#include <filesystem>

#include <ATen/core/Tensor.h>

#include "wscsl/data/npy.hpp"

namespace wscsl {

// Writes `tensor` atomically as float32 when it is floating, else as int64 (integers and booleans).
inline void write_tensor_npy(const std::filesystem::path& file, const at::Tensor& tensor) {
  const bool floating = at::isFloatingType(tensor.scalar_type());
  const at::Tensor data = tensor.to(floating ? at::kFloat : at::kLong).to(at::kCPU).contiguous();
  // Little-endian on every platform LibTorch ships for; '<' states it.
  write_npy(file, floating ? "<f4" : "<i8", data.sizes().vec(),
            {static_cast<const char*>(data.data_ptr()), data.nbytes()});
}

}  // namespace wscsl
