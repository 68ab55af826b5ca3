// Reading NumPy .npy files (formats 1.0, 2.0 and 3.0) that hold a 2-D float32 or float64 matrix,
// e.g. text features computed in Python and saved with np.save. The header dictionary is parsed
// as the literal numpy writes ({'descr': '<f4', 'fortran_order': False, 'shape': (N, F), });
// little-endian data only. Every problem is a DataError naming the file and the byte offset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wscsl {

// Bounds checked before any value is read: the header's size (numpy writes about a hundred
// bytes) and the number of columns (the size of a layer, as the HGLMM reader's `dim`).
inline constexpr std::uint64_t kMaxNpyHeaderBytes = 65536;
inline constexpr std::int64_t kMaxNpyColumns = 65536;

struct NpyMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> values;  // rows × cols, row-major (float64 files rounded to float32)
};

// The matrix stored in `bytes` (`file` names it in messages). Refused: a missing magic string, an
// unknown version, a header that is not the dictionary numpy writes (exactly the keys descr,
// fortran_order and shape), a dtype other than '<f4' and '<f8', a shape that is not (N, F) with
// N, F ≥ 1 or F > kMaxNpyColumns, data of another size than the shape needs, and non-finite
// values.
NpyMatrix parse_npy_matrix(const std::string& bytes, const std::filesystem::path& file);
// The same for a file, its header read and checked before the rest.
NpyMatrix read_npy_matrix(const std::filesystem::path& file);

}  // namespace wscsl
