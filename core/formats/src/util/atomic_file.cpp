#include "wscsl/util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* step, int error) {
  throw Error(fmt::format("could not write {} ({} failed: {}); its previous content is unchanged",
                          path.string(), step, std::strerror(error)));
}

// ".<name>.tmp-<pid>" beside the target: hidden, and unique to the writing process.
constexpr std::string_view kTemporaryInfix = ".tmp-";

std::filesystem::path temporary_for(const std::filesystem::path& path) {
  return path.parent_path() /
         fmt::format(".{}{}{}", path.filename().string(), kTemporaryInfix, ::getpid());
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(path, {content}, [](WriteStep, std::size_t) {});
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::vector<std::string_view>& parts,
                           const std::function<void(WriteStep, std::size_t)>& on_step) {
  const std::filesystem::path temporary = temporary_for(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "open", errno);
  on_step(WriteStep::opened, 0);
  for (std::size_t part = 0; part < parts.size(); ++part) {
    const std::string_view content = parts[part];
    std::size_t written = 0;
    while (written < content.size()) {
      const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int error = errno;
        ::close(fd);
        ::unlink(temporary.c_str());
        fail(path, "write", error);
      }
      written += static_cast<std::size_t>(n);
    }
    on_step(WriteStep::part_written, part);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    fail(path, "fsync", error);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, "close", error);
  }
  on_step(WriteStep::synced, 0);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, "rename", error);
  }
  on_step(WriteStep::renamed, 0);
  const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void remove_abandoned_writes(const std::filesystem::path& dir) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;  // one that cannot be removed is left alone
    if (name.size() > 1 && name[0] == '.' && name.find(kTemporaryInfix) != std::string::npos)
      std::filesystem::remove(it->path(), ignored);
  }
}

std::string file_problem(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_regular_file(status)) return {};
  if (!fs::exists(status)) {
    // A dangling link is "no such file" too, but says where it points.
    if (fs::is_symlink(fs::symlink_status(path, ec)))
      return fmt::format("no such file (a link to {}, which does not exist)",
                         fs::read_symlink(path, ec).string());
    return "no such file";
  }
  const char* kind = "neither a regular file nor a directory";
  switch (status.type()) {
    case fs::file_type::directory:
      kind = "a directory";
      break;
    case fs::file_type::fifo:
      kind = "a FIFO";
      break;
    case fs::file_type::character:
      kind = "a character device";
      break;
    case fs::file_type::block:
      kind = "a block device";
      break;
    case fs::file_type::socket:
      kind = "a socket";
      break;
    default:
      break;
  }
  std::string link;
  if (fs::is_symlink(fs::symlink_status(path, ec)))
    link = fmt::format(" (a link to {})", fs::canonical(path, ec).string());
  return fmt::format("is {}{}; expected a regular file", kind, link);
}

bool optional_file_present(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return false;
  const std::string problem = file_problem(path);
  if (!problem.empty()) throw DataError(fmt::format("{}: {}", path.string(), problem));
  return true;
}

std::uintmax_t checked_file_size(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  const std::string problem = file_problem(path);
  if (!problem.empty()) throw DataError(fmt::format("{}: {}", path.string(), problem));
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw DataError(fmt::format("{}: cannot read its size: {}", path.string(), ec.message()));
  if (size > max_bytes)
    throw DataError(fmt::format("{}: {} bytes, more than the {} this kind of file may have",
                                path.string(), size, max_bytes));
  return size;
}

std::string read_file_prefix(const std::filesystem::path& path, std::size_t max_bytes) {
  const std::string problem = file_problem(path);
  if (!problem.empty()) throw DataError(fmt::format("{}: {}", path.string(), problem));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError(fmt::format("{}: cannot open file: {}", path.string(), std::strerror(errno)));
  std::string out(max_bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(max_bytes));
  if (in.bad()) throw DataError(fmt::format("{}: read error", path.string()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

std::string read_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  checked_file_size(path, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError(fmt::format("{}: cannot open file: {}", path.string(), std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw DataError(fmt::format("{}: read error", path.string()));
  return buffer.str();
}

std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  std::string text = read_file(path, max_bytes);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return text;
}

}  // namespace wscsl
