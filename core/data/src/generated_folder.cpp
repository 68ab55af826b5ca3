#include "wscsl/data/generated_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::data {
namespace {

namespace fs = std::filesystem;

std::string stamp_name(const GeneratedFolder& f) {
  return "wscsl_" + f.name + ".stamp";
}

// Present only while a staging folder is being written, so a leftover one is known to be ours.
std::string partial_marker(const GeneratedFolder& f) {
  return "wscsl_" + f.name + ".partial";
}

[[noreturn]] void fail_system(const fs::path& path, const std::string& what, int error) {
  throw Error(fmt::format("{}: cannot {} ({})", path.string(), what, std::strerror(error)));
}

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

bool is_ours(const fs::path& dir, const GeneratedFolder& f) {
  std::error_code ec;
  return fs::is_empty(dir, ec) || fs::exists(dir / stamp_name(f), ec) ||
         fs::exists(dir / partial_marker(f), ec);
}

void remove_ours(const fs::path& dir, const GeneratedFolder& f) {
  if (!is_ours(dir, f))
    throw Error(fmt::format(
        "{}: a folder of that name is in the way and holds no {} stamp; remove it or choose "
        "another root",
        dir.string(), f.what));
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

void write_text_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write the file", path.string()));
}

void create_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the folder ({})", dir.string(), ec.message()));
}

void ensure_generated_folder(const fs::path& root_in, const GeneratedFolder& folder,
                             const std::function<void(const fs::path&)>& write) {
  fs::path root = fs::absolute(root_in).lexically_normal();
  if (!root.has_filename()) root = root.parent_path();
  const fs::path parent = root.parent_path();
  const std::string name = root.filename().string();
  create_folder(parent);
  const FileLock lock(parent / ("." + name + ".lock"));

  const std::string& stamp = folder.stamp;
  const std::string stamp_file = stamp_name(folder);
  const std::string marker = partial_marker(folder);
  std::error_code ec;
  const bool root_exists = fs::exists(root, ec);
  if (root_exists) {
    if (fs::is_regular_file(root / stamp_file, ec) && read_small_file(root / stamp_file) == stamp)
      return;
    if (!fs::is_directory(root, ec) || !is_ours(root, folder))
      throw Error(fmt::format(
          "{}: exists and is not an {} this generator wrote (it has no {}); remove it or "
          "choose another root",
          root.string(), folder.what, stamp_file));
  }

  const fs::path staging = parent / ("." + name + ".partial");
  if (fs::exists(staging, ec)) remove_ours(staging, folder);
  create_folder(staging);
  write_text_file(staging / marker, "");
  try {
    write(staging);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  write_text_file(staging / stamp_file, stamp);
  fs::remove(staging / marker, ec);

  if (root_exists) {
    // The previous one (other options), or an empty folder, goes aside first: a
    // folder cannot be renamed over a non-empty one.
    const fs::path old = parent / ("." + name + ".old");
    if (fs::exists(old, ec)) remove_ours(old, folder);
    fs::rename(root, old, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the previous {} aside ({})", root.string(),
                              folder.what, ec.message()));
    fs::rename(staging, root, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the new {} into place ({})", root.string(),
                              folder.what, ec.message()));
    remove_ours(old, folder);
  } else {
    fs::rename(staging, root, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the new {} into place ({})", root.string(),
                              folder.what, ec.message()));
  }
  sync_folder(parent);
}

}  // namespace wscsl::data
