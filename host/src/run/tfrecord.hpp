// TFRecord framing, the container of TensorBoard's event files: each record is its length
// (uint64, little-endian), the length's masked CRC-32C (uint32), the data, and the data's masked
// CRC-32C.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace wscsl::host {

// CRC-32C (Castagnoli) of `bytes`, masked as TFRecord stores it.
std::uint32_t masked_crc32c(std::string_view bytes);

// `data` framed as one record.
std::string tfrecord(std::string_view data);

// The whole records of a file, in order, up to the first that is cut short or fails its checks
// (what a process killed while writing leaves behind); `problem` says what was wrong there.
struct TFRecords {
  std::vector<std::string> records;
  std::string problem;  // empty when every byte belonged to a whole record
};
TFRecords read_tfrecords(const std::filesystem::path& file);

}  // namespace wscsl::host
