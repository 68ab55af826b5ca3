#include "wscsl/data/store_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/error.hpp"
#include "wscsl/util/fault_injection.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

constexpr char kMagic[8] = {'W', 'S', 'C', 'S', 'L', 'I', 'M', 'G'};
constexpr std::uint32_t kFormat = 1;
constexpr std::int64_t kPage = 4096;
// A manifest lists the problems of unusable images; far more than any list has.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{256} << 20;

struct Header {
  char magic[8];
  std::uint32_t format;
  std::uint32_t manifest_crc32;
  std::uint64_t manifest_offset;
  std::uint64_t manifest_bytes;
  std::uint32_t table_crc32;
  std::uint32_t reserved;
};
static_assert(sizeof(SourceState) == 24, "the source table's rows are 24 bytes");

std::int64_t round_up(std::int64_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage;
}

std::int64_t pixels_offset(std::int64_t images) {
  return round_up(kPage + images * static_cast<std::int64_t>(sizeof(SourceState)));
}

std::uint32_t crc_of(const void* data, std::size_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  // zlib takes lengths as uInt: feed it in pieces.
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t done = 0; done < bytes; done += kPiece)
    crc = crc32(crc, p + done, static_cast<uInt>(std::min(kPiece, bytes - done)));
  return static_cast<std::uint32_t>(crc);
}

[[noreturn]] void damaged(const fs::path& path, const std::string& what) {
  throw DataError(fmt::format(
      "the image store {} is damaged ({}); remove it (`wscsl cache remove {}`) and it is built "
      "again",
      path.string(), what, path.string()));
}

bool read_at(int fd, void* data, std::size_t bytes, std::int64_t offset) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, p, bytes, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n, bytes -= static_cast<std::size_t>(n), offset += n;
  }
  return true;
}

std::string manifest_json(const StoreManifest& m) {
  nlohmann::json problems = nlohmann::json::object();
  for (const auto& [id, problem] : m.problems)
    problems[std::to_string(id)] = problem;
  const nlohmann::json j = {{"format", kFormat},
                            {"folder", m.folder},
                            {"built", m.built},
                            {"images", m.images},
                            {"channels", 3},
                            {"image_size", m.image_size},
                            {"max_image_pixels", m.max_image_pixels},
                            {"problems", problems}};
  return j.dump(1);
}

StoreManifest parse_manifest(const fs::path& path, const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    StoreManifest m;
    m.folder = j.at("folder").get<std::string>();
    m.built = j.at("built").get<std::string>();
    m.images = j.at("images").get<std::int64_t>();
    m.image_size = j.at("image_size").get<std::int64_t>();
    m.max_image_pixels = j.at("max_image_pixels").get<std::int64_t>();
    for (const auto& [id, problem] : j.at("problems").items())
      m.problems.emplace(std::stoll(id), problem.get<std::string>());
    if (m.images < 0 || m.image_size < 1) damaged(path, "its manifest states no valid geometry");
    return m;
  } catch (const nlohmann::json::exception& e) {
    damaged(path, fmt::format("its manifest cannot be read: {}", e.what()));
  } catch (const std::logic_error&) {  // std::stoll
    damaged(path, "its manifest names an image by something else than a number");
  }
}

// The header and the manifest of the open store `fd`, whose file has `file_bytes`.
std::pair<Header, StoreManifest> read_head(int fd, const fs::path& path, std::uint64_t file_bytes) {
  Header h{};
  if (!read_at(fd, &h, sizeof h, 0) || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    throw DataError(fmt::format("{} is not an image store of wscsl (it does not start with {})",
                                path.string(), std::string(kMagic, sizeof kMagic)));
  if (h.format != kFormat)
    throw DataError(fmt::format(
        "the image store {} has format {}, and this wscsl reads format {}; remove it (`wscsl "
        "cache remove {}`) and it is built again",
        path.string(), h.format, kFormat, path.string()));
  if (h.manifest_bytes > kMaxManifestBytes || h.manifest_offset > file_bytes ||
      h.manifest_bytes != file_bytes - h.manifest_offset)
    damaged(path, fmt::format("{} bytes, where its header places a manifest of {} bytes at {}",
                              file_bytes, h.manifest_bytes, h.manifest_offset));
  std::string text(h.manifest_bytes, '\0');
  if (!read_at(fd, text.data(), text.size(), static_cast<std::int64_t>(h.manifest_offset)))
    damaged(path, "its manifest cannot be read");
  if (crc_of(text.data(), text.size()) != h.manifest_crc32)
    damaged(path, "its manifest does not match its checksum");
  StoreManifest m = parse_manifest(path, text);
  if (static_cast<std::int64_t>(h.manifest_offset) != store_data_bytes(m.images, m.image_bytes()))
    damaged(path, fmt::format("its manifest lists {} images of {} bytes, which do not fill the {} "
                              "bytes before it",
                              m.images, m.image_bytes(), h.manifest_offset));
  return {h, std::move(m)};
}

class OpenFile {
 public:
  explicit OpenFile(const fs::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0)
      throw DataError(
          fmt::format("cannot open the image store {}: {}", path.string(), std::strerror(errno)));
  }
  ~OpenFile() { ::close(fd_); }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }
  std::uint64_t size() const {
    struct stat st {};
    return ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  }

 private:
  int fd_;
};

}  // namespace

std::int64_t store_data_bytes(std::int64_t images, std::int64_t image_bytes) {
  return pixels_offset(images) + images * image_bytes;
}

StoreManifest read_store_manifest(const fs::path& path) {
  const OpenFile file(path);
  return read_head(file.fd(), path, file.size()).second;
}

std::vector<fs::path> store_temporaries(const fs::path& path) {
  std::vector<fs::path> out;
  const std::string prefix = path.filename().string() + ".tmp-";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(path.parent_path(), ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  return out;
}

StoreWriter::StoreWriter(fs::path path, std::int64_t images, std::int64_t image_bytes)
    : path_(std::move(path)),
      temporary_(path_.string() + fmt::format(".tmp-{}", ::getpid())),
      images_(images),
      image_bytes_(image_bytes),
      sources_(static_cast<std::size_t>(images)) {
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("creating it", errno);
  const std::int64_t bytes = store_data_bytes(images, image_bytes);
  if (const int error = ::posix_fallocate(fd_, 0, bytes); error != 0) {
    ::close(fd_);  // the destructor does not run when the constructor throws
    ::unlink(temporary_.c_str());
    fail(fmt::format("reserving {} MiB", (bytes + kBytesPerMiB - 1) / kBytesPerMiB).c_str(), error);
  }
}

StoreWriter::~StoreWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

void StoreWriter::fail(const char* step, int error) const {
  const bool no_room = error == ENOSPC || error == EDQUOT || error == EFBIG;
  throw DataError(fmt::format(
      "cannot build the image store {}: {} failed ({}); {}", path_.string(), step,
      std::strerror(error),
      no_room ? fmt::format("free room in {} or set dataset.cache_dir to another folder",
                            path_.parent_path().string())
              : "set dataset.cache_dir to a folder this process may write"));
}

void StoreWriter::write_at(const void* data, std::size_t bytes, std::int64_t offset) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, bytes, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("writing it", errno);
    p += n, bytes -= static_cast<std::size_t>(n), offset += n;
  }
}

void StoreWriter::write_image(std::int64_t id, const std::uint8_t* pixels,
                              const SourceState& source) {
  const auto bytes = static_cast<std::size_t>(image_bytes_);
  write_at(pixels, bytes, pixels_offset(images_) + id * image_bytes_);
  SourceState& s = sources_[static_cast<std::size_t>(id)];
  s = source;
  s.crc32 = crc_of(pixels, bytes);
  s.usable = 1;
}

void StoreWriter::skip_image(std::int64_t id, const SourceState& source) {
  SourceState& s = sources_[static_cast<std::size_t>(id)];
  s = source;
  s.usable = 0;
}

void StoreWriter::commit(const StoreManifest& manifest) {
  const std::size_t table_bytes = sources_.size() * sizeof(SourceState);
  write_at(sources_.data(), table_bytes, kPage);
  const std::string text = manifest_json(manifest);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.manifest_offset = static_cast<std::uint64_t>(store_data_bytes(images_, image_bytes_));
  h.manifest_bytes = text.size();
  h.manifest_crc32 = crc_of(text.data(), text.size());
  h.table_crc32 = crc_of(sources_.data(), table_bytes);
  write_at(text.data(), text.size(), static_cast<std::int64_t>(h.manifest_offset));
  write_at(&h, sizeof h, 0);
  if (::fsync(fd_) != 0) fail("syncing it", errno);
  ::close(fd_);
  fd_ = -1;
  fault_point(faults::kStoreBeforeRename);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) fail("renaming it to its place", errno);
  committed_ = true;
  const int dir = ::open(path_.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

MappedStore::MappedStore(const fs::path& path) : path_(path) {
  const OpenFile file(path);
  const std::uint64_t bytes = file.size();
  auto [header, manifest] = read_head(file.fd(), path, bytes);
  manifest_ = std::move(manifest);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (map == MAP_FAILED)
    throw DataError(
        fmt::format("cannot map the image store {}: {}", path.string(), std::strerror(errno)));
  map_ = static_cast<const std::uint8_t*>(map);
  map_bytes_ = bytes;
  sources_ = reinterpret_cast<const SourceState*>(map_ + kPage);
  pixels_ = map_ + pixels_offset(manifest_.images);
  if (crc_of(sources_, static_cast<std::size_t>(manifest_.images) * sizeof(SourceState)) !=
      header.table_crc32) {
    ::munmap(const_cast<std::uint8_t*>(map_), map_bytes_);
    damaged(path, "its source table does not match its checksum");
  }
}

MappedStore::~MappedStore() {
  ::munmap(const_cast<std::uint8_t*>(map_), map_bytes_);
}

void MappedStore::copy(std::int64_t id, std::uint8_t* out) const {
  const std::int64_t bytes = manifest_.image_bytes();
  std::memcpy(out, pixels_ + id * bytes, static_cast<std::size_t>(bytes));
  if (crc_of(out, static_cast<std::size_t>(bytes)) != sources_[id].crc32)
    damaged(path_, fmt::format("image {} does not match its checksum", id));
}

}  // namespace wscsl
