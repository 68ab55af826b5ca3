// NumPy .npy files. Reading (formats 1.0, 2.0 and 3.0): a 2-D float32 or float64 matrix, e.g.
// text features computed in Python and saved with np.save. The header dictionary is parsed as
// the literal numpy writes ({'descr': '<f4', 'fortran_order': False, 'shape': (N, F), });
// little-endian data only. Every problem is a DataError naming the file and the byte offset.
// Writing (format 1.0): C-ordered arrays of any shape, e.g. exported embeddings for np.load.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
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

// The header of a C-ordered array of dtype `descr` ('<f4', '<i8') and `shape`: the header of
// the dictionary numpy writes for it.
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape);
// The header holding `dictionary` ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"):
// magic, version 1.0, header length and the dictionary, padded with spaces and a newline so that
// the data start at a multiple of 64 bytes. Any dictionary, for tests of what a reader refuses.
std::string npy_header_of_dictionary(std::string dictionary);
// Writes such an array atomically: its header, then `data`, the bytes of its values in C order.
void write_npy(const std::filesystem::path& file, const std::string& descr,
               const std::vector<std::int64_t>& shape, std::string_view data);

}  // namespace wscsl
