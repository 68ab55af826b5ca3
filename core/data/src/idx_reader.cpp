#include "wscsl/data/idx_reader.hpp"

#include <zlib.h>

#include <fmt/format.h>

#include "wscsl/data/fashion_render.hpp"
#include "wscsl/error.hpp"

namespace wscsl::data {
namespace {

constexpr std::size_t kMaxBytes = std::size_t{1} << 30;  // far above any IDX file we read

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw DataError(fmt::format("{}: {}", path.string(), what));
}

std::vector<std::uint8_t> gunzip(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) fail(path, "cannot open file (is the dataset-fashion-mnist package installed?)");
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[1 << 16];
  for (;;) {
    const int n = gzread(file, chunk, sizeof chunk);
    if (n < 0) {
      int code = 0;
      const std::string message = gzerror(file, &code);
      gzclose(file);
      fail(path, "corrupt gzip stream (" + message + ")");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
    if (bytes.size() > kMaxBytes) {
      gzclose(file);
      fail(path, "decompresses to more than 1 GiB; not an IDX file of this benchmark");
    }
  }
  int code = 0;
  const std::string message = gzerror(file, &code);
  gzclose(file);
  if (code != Z_OK && code != Z_STREAM_END)
    fail(path, "truncated or corrupt gzip stream (" + message + ")");
  return bytes;
}

std::uint32_t big_endian(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

IdxArray read_idx_gz(const std::filesystem::path& path, int expected_rank) {
  std::vector<std::uint8_t> bytes = gunzip(path);
  if (bytes.size() < 4)
    fail(path, fmt::format("{} bytes is too short for an IDX header", bytes.size()));
  if (bytes[0] != 0 || bytes[1] != 0)
    fail(path, fmt::format("bad IDX magic number 0x{:02x}{:02x}{:02x}{:02x}; expected 0x0000080{}",
                           bytes[0], bytes[1], bytes[2], bytes[3], expected_rank));
  if (bytes[2] != 0x08)
    fail(path, fmt::format("IDX element type 0x{:02x}; expected 0x08 (unsigned byte)", bytes[2]));
  if (bytes[3] != expected_rank)
    fail(path, fmt::format("IDX rank {}; expected {}", bytes[3], expected_rank));
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(expected_rank);
  if (bytes.size() < header)
    fail(path, fmt::format("truncated header: {} bytes, expected {}", bytes.size(), header));
  IdxArray out;
  std::uint64_t count = 1;
  for (int i = 0; i < expected_rank; ++i) {
    const std::uint32_t d = big_endian(bytes.data() + 4 + 4 * i);
    if (d == 0) fail(path, fmt::format("dimension {} is zero", i));
    count *= d;
    if (count > kMaxBytes) fail(path, "the header announces more than 1 GiB of data");
    out.dims.push_back(d);
  }
  const std::size_t payload = bytes.size() - header;
  if (payload < count)
    fail(path, fmt::format("truncated: the header announces {} data bytes, the file has {}", count,
                           payload));
  if (payload > count)
    fail(path, fmt::format("{} unexpected bytes after the {} data bytes the header announces",
                           payload - count, count));
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

FashionMnistFiles read_fashion_mnist(const std::filesystem::path& root, const std::string& prefix) {
  FashionMnistFiles s;
  const auto images_path = root / (prefix + "-images-idx3-ubyte.gz");
  const auto labels_path = root / (prefix + "-labels-idx1-ubyte.gz");
  s.images = read_idx_gz(images_path, 3);
  s.labels = read_idx_gz(labels_path, 1);
  if (s.images.dims[1] != kGarmentSize || s.images.dims[2] != kGarmentSize)
    throw DataError(fmt::format("{}: images are {}×{}; expected 28×28", images_path.string(),
                                s.images.dims[1], s.images.dims[2]));
  if (s.images.dims[0] != s.labels.dims[0])
    throw DataError(fmt::format("{} holds {} images but {} holds {} labels", images_path.string(),
                                s.images.dims[0], labels_path.string(), s.labels.dims[0]));
  for (std::size_t i = 0; i < s.labels.data.size(); ++i)
    if (s.labels.data[i] >= kNumCategories)
      throw DataError(fmt::format("{}: label {} of item {} is outside 0..9", labels_path.string(),
                                  s.labels.data[i], i));
  return s;
}

}  // namespace wscsl::data
