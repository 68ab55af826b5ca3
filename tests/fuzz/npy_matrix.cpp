// NumPy .npy matrices of float32 or float64 (text features saved with np.save).
#include <cmath>

#include "fuzz_target.hpp"
#include "wscsl/data/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_text(data, size, [](const std::string& bytes) {
    const wscsl::NpyMatrix m = wscsl::parse_npy_matrix(bytes, "features.npy");
    if (m.rows < 1 || m.cols < 1 || m.values.size() != static_cast<std::size_t>(m.rows * m.cols))
      __builtin_trap();
    for (float v : m.values)
      if (!std::isfinite(v)) __builtin_trap();
  });
}
