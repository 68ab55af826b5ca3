// Reader for gzip-compressed IDX files (the MNIST / Fashion-MNIST format), with full validation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace wscsl::fashion_crb {

struct IdxArray {
  std::vector<std::int64_t> dims;  // e.g. {60000, 28, 28}
  std::vector<std::uint8_t> data;  // row-major, product(dims) bytes
};

// Reads an unsigned-byte IDX file with `expected_rank` dimensions. Every problem (missing file,
// corrupt or truncated gzip stream, wrong magic number, wrong rank, a payload shorter or longer
// than the header announces) throws wscsl::DataError naming the file and what was expected. It
// never reads past the data it validated.
IdxArray read_idx_gz(const std::filesystem::path& path, int expected_rank);

}  // namespace wscsl::fashion_crb
