#include "tfrecord.hpp"

#include <fmt/format.h>
#include <boost/crc.hpp>

#include "wscsl/util/atomic_file.hpp"

namespace wscsl::host {
namespace {

using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

constexpr std::size_t kLengthBytes = 8;
constexpr std::size_t kCrcBytes = 4;

void append_little_endian(std::string& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

std::uint64_t little_endian(std::string_view bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;)
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

}  // namespace

std::uint32_t masked_crc32c(std::string_view bytes) {
  Crc32c crc;
  crc.process_bytes(bytes.data(), bytes.size());
  const std::uint32_t c = crc.checksum();
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string tfrecord(std::string_view data) {
  std::string out;
  out.reserve(kLengthBytes + 2 * kCrcBytes + data.size());
  append_little_endian(out, data.size(), kLengthBytes);
  append_little_endian(out, masked_crc32c(out), kCrcBytes);
  out.append(data);
  append_little_endian(out, masked_crc32c(data), kCrcBytes);
  return out;
}

TFRecords read_tfrecords(const std::filesystem::path& file) {
  const std::string bytes = read_file(file);
  const std::string_view all(bytes);
  TFRecords read;
  std::size_t at = 0;
  while (at < all.size()) {
    const auto stop = [&](const std::string& why) {
      read.problem = fmt::format("{}: record {} at byte {} {}", file.string(),
                                 read.records.size() + 1, at, why);
    };
    if (all.size() - at < kLengthBytes + kCrcBytes) {
      stop("is cut short in its header");
      break;
    }
    const std::string_view length_bytes = all.substr(at, kLengthBytes);
    if (little_endian(all.substr(at + kLengthBytes, kCrcBytes)) != masked_crc32c(length_bytes)) {
      stop("has a length that fails its CRC-32C");
      break;
    }
    const std::uint64_t length = little_endian(length_bytes);
    const std::size_t data_at = at + kLengthBytes + kCrcBytes;
    if (length > all.size() - data_at || all.size() - data_at - length < kCrcBytes) {
      stop(fmt::format("announces {} bytes, more than the file holds", length));
      break;
    }
    const std::string_view data = all.substr(data_at, length);
    if (little_endian(all.substr(data_at + length, kCrcBytes)) != masked_crc32c(data)) {
      stop("fails its data's CRC-32C");
      break;
    }
    read.records.emplace_back(data);
    at = data_at + length + kCrcBytes;
  }
  return read;
}

}  // namespace wscsl::host
