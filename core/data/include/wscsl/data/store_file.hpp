// The file of an image store: decoded images side by side, each with a CRC-32, the size and time
// of every source file when it was decoded, and a JSON manifest saying what the store was built
// from. Written once into a temporary file beside its place and renamed there when complete, so
// that a store at its place is always whole; read through a read-only memory map shared by every
// process (the page cache holds the pixels once per machine).
//
// Layout: a header (magic, format, where the manifest is, the CRC-32s of the manifest and of the
// source table), the source table (one SourceState per image), the pixels (images × image_bytes,
// channel-major), the manifest. The table and the pixels start at multiples of the page size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace wscsl {

// Bytes in a mebibyte: image stores' sizes and limits are stated in MiB.
constexpr std::int64_t kBytesPerMiB = std::int64_t{1} << 20;

// The state of an image's source file when it was decoded, and the checksum of its pixels.
struct SourceState {
  std::int64_t size = -1;      // bytes; -1 when the file could not be examined
  std::int64_t mtime_ns = -1;  // last modification, in nanoseconds since the epoch
  std::uint32_t crc32 = 0;     // of the decoded pixels
  std::uint32_t usable = 0;    // 0 when the image could not be decoded (see the manifest)
};

// What a store was built from and how, as its manifest states it.
struct StoreManifest {
  std::string folder;  // the image folder
  std::string built;   // UTC time, ISO 8601
  std::int64_t images = 0;
  std::int64_t image_size = 0;  // images are 3 × image_size × image_size bytes
  std::int64_t max_image_pixels = 0;
  std::map<std::int64_t, std::string> problems;  // why unusable images could not be decoded

  std::int64_t image_bytes() const { return 3 * image_size * image_size; }
};

// Bytes the file of a store of `images` images of `image_bytes` each takes, before its manifest.
std::int64_t store_data_bytes(std::int64_t images, std::int64_t image_bytes);

// Reads the header and the manifest of the store at `path`. Throws DataError naming the file when
// it is not a store of this format or its manifest does not match its checksum.
StoreManifest read_store_manifest(const std::filesystem::path& path);

// Writes a store into "<path>.tmp-<pid>" and renames it to `path` on commit(). Images may be
// written from several threads at once. Destroyed before commit(), it removes the temporary file.
class StoreWriter {
 public:
  // Creates the temporary file and reserves the room of every image. Throws DataError naming the
  // file when it cannot: a read-only folder, a full disk or a file size limit.
  StoreWriter(std::filesystem::path path, std::int64_t images, std::int64_t image_bytes);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Writes the pixels of image `id` (image_bytes) and records their checksum and `source`.
  void write_image(std::int64_t id, const std::uint8_t* pixels, const SourceState& source);
  // Records image `id` as unusable (the manifest says why) with the state of its source.
  void skip_image(std::int64_t id, const SourceState& source);
  // Writes the source table and the manifest, syncs the file, renames it to its place and syncs
  // the folder.
  void commit(const StoreManifest& manifest);

  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  void write_at(const void* data, std::size_t bytes, std::int64_t offset);
  [[noreturn]] void fail(const char* step, int error) const;

  std::filesystem::path path_, temporary_;
  std::int64_t images_, image_bytes_;
  std::vector<SourceState> sources_;
  int fd_ = -1;
  bool committed_ = false;
};

// The temporary files of writers of `path` (whatever process made them).
std::vector<std::filesystem::path> store_temporaries(const std::filesystem::path& path);

// A store mapped read-only. Opening checks the header, the manifest, the file's size and the
// source table; each image is checked against its CRC-32 when it is read.
class MappedStore {
 public:
  // Throws DataError naming the file and what is wrong with it.
  explicit MappedStore(const std::filesystem::path& path);
  ~MappedStore();
  MappedStore(const MappedStore&) = delete;
  MappedStore& operator=(const MappedStore&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const StoreManifest& manifest() const { return manifest_; }
  const SourceState& source(std::int64_t id) const { return sources_[id]; }

  // Copies the pixels of image `id` to `out` (image_bytes) and checks them. Throws DataError
  // naming the file and the image when they do not match their checksum.
  void copy(std::int64_t id, std::uint8_t* out) const;

 private:
  std::filesystem::path path_;
  StoreManifest manifest_;
  const std::uint8_t* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const SourceState* sources_ = nullptr;
  const std::uint8_t* pixels_ = nullptr;
};

}  // namespace wscsl
