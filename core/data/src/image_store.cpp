#include "wscsl/data/image_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <thread>

#include <fmt/format.h>
#include <torch/types.h>

#include "wscsl/data/image_file.hpp"
#include "wscsl/data/index_files.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"
#include "wscsl/util/fault_injection.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

// Stores of at least this many images say that they are being built (it takes a while).
constexpr std::size_t kAnnouncedBuild = 10000;

std::int64_t mib_rounded_up(std::int64_t bytes) {
  return (bytes + kBytesPerMiB - 1) / kBytesPerMiB;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// The size and modification time of `file` (links followed), or -1s when it cannot be examined.
SourceState state_of(const fs::path& file) {
  SourceState s;
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return s;
  s.size = st.st_size;
  s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

// Letters, digits, '.', '_' and '-' of `name`, for a file name people can recognise.
std::string file_name_part(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') out += c;
  return out.empty() ? "images" : out.substr(0, 40);
}

constexpr const char* kStoreExtension = ".images";

fs::path lock_file(const fs::path& store) {
  return store.string() + ".lock";
}

// An exclusive lock on "<store>.lock", held while the store is built; a second process waits.
class BuildLock {
 public:
  enum class IfHeld { Wait, Refuse };
  explicit BuildLock(const fs::path& store, IfHeld if_held = IfHeld::Wait) {
    const fs::path lock = lock_file(store);
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw DataError(fmt::format(
          "cannot build the image store {}: its lock file {} cannot be created ({}); set "
          "dataset.cache_dir to a folder this process may write",
          store.string(), lock.string(), std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno != EWOULDBLOCK) refuse(lock, errno);
    if (if_held == IfHeld::Refuse) {
      ::close(fd_);
      throw DataError(
          fmt::format("the image store {} is being built by another process", store.string()));
    }
    fmt::print(stderr, "wscsl: waiting for another process to finish building {}\n",
               store.string());
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) refuse(lock, errno);
  }
  ~BuildLock() { ::close(fd_); }
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

 private:
  // The file system does not lock (some shared ones refuse flock).
  [[noreturn]] void refuse(const fs::path& lock, int error) {
    ::close(fd_);
    throw DataError(fmt::format(
        "cannot lock {} ({}); set dataset.cache_dir to a folder on a file system that supports "
        "flock, such as a local disk",
        lock.string(), std::strerror(error)));
  }

  int fd_ = -1;
};

// The store at `path` when it is there and every source file is as it was when it was built;
// otherwise null, with the reason in `why_not` (empty when there is no store).
std::unique_ptr<MappedStore> open_current(const fs::path& path, const ImageList& images,
                                          std::string& why_not) {
  why_not.clear();
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  auto store = std::make_unique<MappedStore>(path);
  const auto count = static_cast<std::int64_t>(images.entries.size());
  if (store->manifest().images != count) {
    why_not = fmt::format("it holds {} images where {} lists {}", store->manifest().images,
                          images.index.string(), count);
    return nullptr;
  }
  std::int64_t changed = 0;
  std::string first;
  for (std::int64_t id = 0; id < count; ++id) {
    const ImageEntry& entry = images.entries[static_cast<std::size_t>(id)];
    const SourceState now = state_of(images.folder / entry.file);
    const SourceState& then = store->source(id);
    if (now.size != then.size || now.mtime_ns != then.mtime_ns)
      if (changed++ == 0) first = entry.file;
  }
  if (changed == 0) return store;
  why_not = fmt::format("{} of its source images changed since it was built (the first: '{}')",
                        changed, first);
  return nullptr;
}

// Decodes every image of `images` into a new store at `path` (under its BuildLock), in parallel.
void build(const fs::path& path, const ImageList& images, const ImageStoreOptions& o) {
  for (const fs::path& abandoned : store_temporaries(path))
    fs::remove(abandoned);
  const auto count = static_cast<std::int64_t>(images.entries.size());
  const int size = static_cast<int>(o.image_size);
  const std::int64_t image_bytes = 3 * o.image_size * o.image_size;
  const std::int64_t bytes = store_data_bytes(count, image_bytes);
  if (bytes > o.limit_bytes)
    throw DataError(fmt::format(
        "the image store of {} would take {} MiB ({} images of 3×{}×{} bytes), more than "
        "cache_limit_mb = {}; raise it to at least {} in the [dataset] table (or --set "
        "dataset.cache_limit_mb={}) if {} has the room",
        images.index.string(), mib_rounded_up(bytes), count, size, size,
        o.limit_bytes / kBytesPerMiB, mib_rounded_up(bytes), mib_rounded_up(bytes),
        path.parent_path().string()));
  const auto start = std::chrono::steady_clock::now();
  if (images.entries.size() >= kAnnouncedBuild)
    fmt::print(stderr, "wscsl: decoding {} images once into {} ({} MiB)\n", count, path.string(),
               mib_rounded_up(bytes));
  StoreWriter writer(path, count, image_bytes);
  std::vector<std::string> problems(images.entries.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  const auto work = [&] {
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(image_bytes));
    try {
      for (std::size_t i = next++; i < images.entries.size() && !failed; i = next++) {
        const auto id = static_cast<std::int64_t>(i);
        const ImageEntry& entry = images.entries[i];
        // Examined before it is read: a change while it is read shows at the next open.
        const SourceState source = state_of(images.folder / entry.file);
        const ResolvedPath file = resolve_under(images.folder, entry.file);
        if (!file.problem.empty()) {
          problems[i] = file.problem;
          writer.skip_image(id, source);
          continue;
        }
        const DecodedImage decoded = read_image_file(file.path, o.max_image_pixels);
        if (!decoded.problem.empty()) {
          problems[i] = fmt::format("image '{}': {}", entry.file, decoded.problem);
          writer.skip_image(id, source);
          continue;
        }
        resize_and_center_crop(decoded.image, size, pixels.data());
        writer.write_image(id, pixels.data(), source);
        fault_point(faults::kStoreImageWritten);
      }
    } catch (...) {
      if (!failed.exchange(true)) failure = std::current_exception();
    }
  };
  std::size_t threads = o.decode_threads > 0 ? static_cast<std::size_t>(o.decode_threads)
                                             : std::max(1u, std::thread::hardware_concurrency());
  threads = std::max<std::size_t>(1, std::min(threads, images.entries.size()));
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t)
    workers.emplace_back(work);
  work();
  for (std::thread& w : workers)
    w.join();
  if (failure) std::rethrow_exception(failure);
  StoreManifest manifest;
  manifest.folder = images.folder.string();
  manifest.built = utc_now();
  manifest.images = count;
  manifest.image_size = o.image_size;
  manifest.max_image_pixels = o.max_image_pixels;
  for (std::size_t i = 0; i < problems.size(); ++i)
    if (!problems[i].empty()) manifest.problems.emplace(static_cast<std::int64_t>(i), problems[i]);
  writer.commit(manifest);
  if (images.entries.size() >= kAnnouncedBuild)
    fmt::print(stderr, "wscsl: built {} in {:.1f} s\n", path.string(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

const fs::path& ImageList::listing(std::size_t id) const {
  const fs::path& own = entries[id].listed_in;
  return own.empty() ? index : own;
}

fs::path image_cache_dir(const std::string& cache_dir) {
  if (!cache_dir.empty()) return cache_dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  // The XDG specification ignores a relative XDG_CACHE_HOME.
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "wscsl";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "wscsl";
  throw DataError(
      "there is no folder for the image store: set dataset.cache_dir (neither XDG_CACHE_HOME nor "
      "HOME is set)");
}

fs::path image_store_path(const ImageList& images, const ImageStoreOptions& options) {
  std::string what =
      fmt::format("wscsl image store\nsize {}\nmax_image_pixels {}\nfolder {}\n",
                  options.image_size, options.max_image_pixels, images.folder.string());
  for (const ImageEntry& entry : images.entries)
    what += entry.file + '\n';
  return options.cache_dir /
         fmt::format("{}-{}px-{}{}", file_name_part(images.folder.filename().string()),
                     options.image_size, sha256_hex(what).substr(0, 20), kStoreExtension);
}

std::vector<fs::path> image_stores(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == kStoreExtension) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void remove_image_store(const fs::path& path) {
  if (path.extension() != kStoreExtension)
    throw DataError(
        fmt::format("{} is not named as an image store (*{})", path.string(), kStoreExtension));
  {
    const BuildLock lock(path, BuildLock::IfHeld::Refuse);
    for (const fs::path& abandoned : store_temporaries(path))
      fs::remove(abandoned);
    std::error_code ec;
    if (!fs::remove(path, ec) && ec)
      throw DataError(fmt::format("cannot remove {}: {}", path.string(), ec.message()));
  }
  std::error_code ignored;
  fs::remove(lock_file(path), ignored);
}

ImageStore::ImageStore(const ImageList& images, const ImageStoreOptions& options) {
  const fs::path path = image_store_path(images, options);
  std::string why_not;
  store_ = open_current(path, images, why_not);
  if (store_) return;
  std::error_code ec;
  fs::create_directories(options.cache_dir, ec);
  if (ec)
    throw DataError(fmt::format(
        "cannot create the image cache folder {} ({}); set dataset.cache_dir to a folder this "
        "process may write",
        options.cache_dir.string(), ec.message()));
  const BuildLock lock(path);
  store_ = open_current(path, images, why_not);  // another process may have built it meanwhile
  if (store_) return;
  if (!why_not.empty())
    fmt::print(stderr, "wscsl: building the image store {} again: {}\n", path.string(), why_not);
  build(path, images, options);
  store_ = std::make_unique<MappedStore>(path);
  decoded_ = static_cast<std::int64_t>(images.entries.size() - store_->manifest().problems.size());
}

ImageStore::~ImageStore() = default;

const fs::path& ImageStore::path() const {
  return store_->path();
}

std::int64_t ImageStore::image_bytes() const {
  return store_->manifest().image_bytes();
}

const std::string& ImageStore::problem(std::int64_t id) const {
  static const std::string none;
  const auto& problems = store_->manifest().problems;
  const auto it = problems.find(id);
  return it == problems.end() ? none : it->second;
}

at::Tensor ImageStore::gather(const std::vector<std::int64_t>& ids) const {
  const std::int64_t side = store_->manifest().image_size;
  at::Tensor out =
      torch::empty({static_cast<std::int64_t>(ids.size()), 3, side, side}, torch::kUInt8);
  std::uint8_t* dst = out.data_ptr<std::uint8_t>();
  for (std::int64_t id : ids) {
    store_->copy(id, dst);
    dst += image_bytes();
  }
  return out;
}

}  // namespace wscsl
