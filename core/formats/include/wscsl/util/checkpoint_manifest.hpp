// The manifest that seals a checkpoint. A checkpoint file is LibTorch's archive, then a JSON
// manifest describing it, then the manifest's size (8 bytes, little-endian) and a magic:
//
//   [archive][{"archive_bytes": …, "archive_sha256": "…", "global_step": …, …}][size][WSCSLCK3]
//
// The manifest is verified before LibTorch's deserialiser sees a byte of the archive, so a
// damaged, truncated or foreign file is refused with a sentence, never loaded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace wscsl {

struct CheckpointManifest {
  std::uint64_t archive_bytes = 0;
  std::string archive_sha256;  // lower-case hex
  std::int64_t global_step = 0;
  std::string config_sha256;  // of the resolved pipeline the run trains
  std::string wscsl_version;
  std::string libtorch_version;
};

// The manifest's tail: its size, then this magic.
inline constexpr std::string_view kCheckpointMagic = "WSCSLCK3";
// Larger manifests are refused unread.
inline constexpr std::size_t kMaxManifestBytes = 64 * 1024;

// The SHA-256 of `bytes`, as lower-case hex.
std::string sha256_hex(std::string_view bytes);

// The manifest and tail that follow `archive` in the file: `manifest` with archive_bytes and
// archive_sha256 set from `archive`.
std::string seal_checkpoint(std::string_view archive, CheckpointManifest manifest);

struct SealedCheckpoint {
  std::string_view archive;  // into the bytes given to open_sealed_checkpoint
  CheckpointManifest manifest;
};

// Checks the tail, the manifest and the archive's size and SHA-256. Throws DataError naming
// `path` and what differs.
SealedCheckpoint open_sealed_checkpoint(std::string_view bytes, const std::filesystem::path& path);

}  // namespace wscsl
