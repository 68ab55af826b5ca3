// The embedded outfit benchmark on disk, made safe to share: a lock against concurrent
// processes, a staging folder against interruption, and a stamp of the options it was made with.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include "files.hpp"
#include "wscsl/error.hpp"

namespace wscsl::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStampName = "wscsl_outfit_benchmark.stamp";
// Present only while a staging folder is being written, so a leftover one is known to be ours.
constexpr const char* kPartialMarker = "wscsl_outfit_benchmark.partial";
constexpr int kFormatVersion = 2;  // 2: text keys, train_hglmm_pca6000.txt

std::string stamp_text(const OutfitBenchmarkOptions& options) {
  return fmt::format("wscsl outfit benchmark {}\npreset {}\nseed {}\nfashion_mnist_root {}\n",
                     kFormatVersion, options.preset == OutfitPreset::Tiny ? "tiny" : "medium",
                     options.seed, options.fashion_mnist_root.string());
}

[[noreturn]] void fail_system(const fs::path& path, const std::string& what, int error) {
  throw Error(fmt::format("{}: cannot {} ({})", path.string(), what, std::strerror(error)));
}

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

bool is_ours(const fs::path& dir) {
  std::error_code ec;
  return fs::is_empty(dir, ec) || fs::exists(dir / kStampName, ec) ||
         fs::exists(dir / kPartialMarker, ec);
}

void remove_ours(const fs::path& dir) {
  if (!is_ours(dir))
    throw Error(fmt::format(
        "{}: a folder of that name is in the way and holds no outfit benchmark stamp; remove it "
        "or choose another root",
        dir.string()));
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec)
    throw Error(
        fmt::format("{}: cannot remove the leftover folder ({})", dir.string(), ec.message()));
}

void sync_folder(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_system(path, "open the folder to sync it", errno);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) fail_system(path, "sync", error);
}

class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail_system(path, "open the lock file", errno);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd_);
      fail_system(path, "lock", error);
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

void ensure_outfit_benchmark(const std::filesystem::path& root_in,
                             const OutfitBenchmarkOptions& options) {
  fs::path root = fs::absolute(root_in).lexically_normal();
  if (!root.has_filename()) root = root.parent_path();
  const fs::path parent = root.parent_path();
  const std::string name = root.filename().string();
  create_folder(parent);
  const FileLock lock(parent / ("." + name + ".lock"));

  const std::string stamp = stamp_text(options);
  std::error_code ec;
  const bool root_exists = fs::exists(root, ec);
  if (root_exists) {
    if (fs::is_regular_file(root / kStampName, ec) && read_small_file(root / kStampName) == stamp)
      return;
    if (!fs::is_directory(root, ec) || !is_ours(root))
      throw Error(fmt::format(
          "{}: exists and is not an outfit benchmark this generator wrote (it has no {}); "
          "remove it or choose another root",
          root.string(), kStampName));
  }

  const fs::path staging = parent / ("." + name + ".partial");
  if (fs::exists(staging, ec)) remove_ours(staging);
  create_folder(staging);
  write_text_file(staging / kPartialMarker, "");
  try {
    write_benchmark(staging, options);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  write_text_file(staging / kStampName, stamp);
  fs::remove(staging / kPartialMarker, ec);

  if (root_exists) {
    // The previous benchmark (another preset or seed), or an empty folder, goes aside first: a
    // folder cannot be renamed over a non-empty one.
    const fs::path old = parent / ("." + name + ".old");
    if (fs::exists(old, ec)) remove_ours(old);
    fs::rename(root, old, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the previous benchmark aside ({})", root.string(),
                              ec.message()));
    fs::rename(staging, root, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the new benchmark into place ({})", root.string(),
                              ec.message()));
    remove_ours(old);
  } else {
    fs::rename(staging, root, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the new benchmark into place ({})", root.string(),
                              ec.message()));
  }
  sync_folder(parent);
}

}  // namespace wscsl::data
