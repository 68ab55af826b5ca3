// NumPy .npy files (format 1.0) for tensors, so Python reads exported embeddings with np.load.
#pragma once

#include <filesystem>
#include <string>

#include <ATen/core/Tensor.h>

namespace wscsl::host {

// The .npy header of a C-ordered array: magic, version 1.0, header length and the dict, padded
// with spaces and a newline so the data starts at a multiple of 64 bytes.
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape);

// Writes a float32 or int64 tensor (other floating types are written as float32, other integer
// and boolean types as int64) atomically.
void write_npy(const std::filesystem::path& path, const at::Tensor& tensor);

}  // namespace wscsl::host
