// Reader for gzip-compressed IDX files (the MNIST / Fashion-MNIST format), with full validation,
// and for the Fashion-MNIST files that Fashion-CRB and the outfit benchmark render.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wscsl::data {

struct IdxArray {
  std::vector<std::int64_t> dims;  // e.g. {60000, 28, 28}
  std::vector<std::uint8_t> data;  // row-major, product(dims) bytes
};

// Reads an unsigned-byte IDX file with `expected_rank` dimensions. Every problem (missing file,
// corrupt or truncated gzip stream, wrong magic number, wrong rank, a payload shorter or longer
// than the header announces) throws wscsl::DataError naming the file and what was expected. It
// never reads past the data it validated.
IdxArray read_idx_gz(const std::filesystem::path& path, int expected_rank);

// One Fashion-MNIST file pair, `<prefix>-images-idx3-ubyte.gz` and `<prefix>-labels-idx1-ubyte.gz`
// under `root` (prefix "train" or "t10k"): 28×28 images and labels 0..9, as many of each.
struct FashionMnistFiles {
  IdxArray images;
  IdxArray labels;
};
FashionMnistFiles read_fashion_mnist(const std::filesystem::path& root, const std::string& prefix);

}  // namespace wscsl::data
