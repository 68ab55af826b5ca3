#include "npy.hpp"

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "wscsl/util/atomic_file.hpp"

namespace wscsl::host {

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape) {
  // As NumPy spells it: (), (n,), (m, n).
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  const std::size_t unpadded = 10 + dict.size() + 1;  // magic(6) version(2) length(2) dict '\n'
  dict += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>((dict.size() >> 8) & 0xff);
  return header + dict;
}

void write_npy(const std::filesystem::path& path, const at::Tensor& tensor) {
  const bool floating = at::isFloatingType(tensor.scalar_type());
  const at::Tensor data = tensor.to(floating ? at::kFloat : at::kLong).to(at::kCPU).contiguous();
  // Little-endian on every platform LibTorch ships for; '<' states it.
  std::string bytes = npy_header(floating ? "<f4" : "<i8", data.sizes().vec());
  bytes.append(static_cast<const char*>(data.data_ptr()), data.nbytes());
  write_file_atomically(path, bytes);
}

}  // namespace wscsl::host
