#include "checkpoint.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/serialize/archive.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace wscsl::host {
namespace {

constexpr std::int64_t kFormatVersion = 2;  // 2: the checksum trailer

// The trailer: magic, then the archive's size (8 bytes, little-endian), then its SHA-256.
constexpr char kMagic[8] = {'W', 'S', 'C', 'S', 'L', 'C', 'K', '2'};
constexpr std::size_t kDigestBytes = 32;
constexpr std::size_t kTrailerBytes = sizeof kMagic + 8 + kDigestBytes;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw DataError(fmt::format("{}: {}", path.string(), what));
}

std::array<unsigned char, kDigestBytes> sha256(const char* data, std::size_t size) {
  std::array<unsigned char, kDigestBytes> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data, size, digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != kDigestBytes)
    throw Error("internal: SHA-256 failed");
  return digest;
}

std::string hex(const unsigned char* bytes, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i)
    out += fmt::format("{:02x}", bytes[i]);
  return out;
}

std::string with_trailer(std::string archive) {
  const auto digest = sha256(archive.data(), archive.size());
  std::uint64_t size = archive.size();
  archive.append(kMagic, sizeof kMagic);
  for (int i = 0; i < 8; ++i, size >>= 8)
    archive.push_back(static_cast<char>(size & 0xff));
  archive.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return archive;
}

}  // namespace

void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                     torch::optim::Optimizer* optimizer, const TrainingState& state) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.write("format_version", c10::IValue(kFormatVersion));
  archive.write("epoch", c10::IValue(state.epoch));
  archive.write("step", c10::IValue(state.step));
  archive.write("global_step", c10::IValue(state.global_step));
  archive.write("epoch_loss_sum", c10::IValue(state.epoch_loss_sum));
  archive.write("epoch_loss_count", c10::IValue(state.epoch_loss_count));
  archive.write("best_value", c10::IValue(state.best_value));
  archive.write("best_epoch", c10::IValue(state.best_epoch));
  archive.write("threads", c10::IValue(state.threads));
  archive.write("config", c10::IValue(state.config));
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("rng", generator.get_state());
  }
  // Serialise in memory; only our own checked write touches the disk (LibTorch's stream writer
  // aborts the process on a full disk).
  std::ostringstream buffer;
  archive.save_to(buffer);
  write_file_atomically(path, with_trailer(buffer.str()));
}

std::filesystem::path newest_verified(const std::vector<std::filesystem::path>& candidates,
                                      std::vector<std::string>& skipped) {
  for (const std::filesystem::path& candidate : candidates) {
    try {
      verified_archive(read_file(candidate), candidate);
      return candidate;
    } catch (const DataError& e) {
      skipped.push_back(e.what());
    }
  }
  throw DataError(skipped.empty()
                      ? std::string("no checkpoint to load")
                      : "no checkpoint verifies: " + fmt::format("{}", fmt::join(skipped, "; ")));
}

std::string verified_archive(const std::string& bytes, const std::filesystem::path& path) {
  const std::size_t total = bytes.size();
  if (total < kTrailerBytes ||
      std::memcmp(bytes.data() + total - kTrailerBytes, kMagic, sizeof kMagic) != 0)
    fail(path, "not a wscsl checkpoint, or truncated (it does not end with wscsl's checksum)");
  const char* size_bytes = bytes.data() + total - kTrailerBytes + sizeof kMagic;
  std::uint64_t size = 0;
  for (int i = 7; i >= 0; --i)
    size = (size << 8) | static_cast<unsigned char>(size_bytes[i]);
  if (size != total - kTrailerBytes)
    fail(path, fmt::format("damaged: its checksum covers {} bytes, the file holds {}", size,
                           total - kTrailerBytes));
  const auto digest = sha256(bytes.data(), size);
  const auto* stored = reinterpret_cast<const unsigned char*>(size_bytes + 8);
  if (std::memcmp(digest.data(), stored, kDigestBytes) != 0)
    fail(path, fmt::format("damaged: its bytes do not match the SHA-256 written with them "
                           "(expected {}…, got {}…); it is not loaded",
                           hex(stored, 6), hex(digest.data(), 6)));
  return bytes.substr(0, size);
}

TrainingState load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                              torch::optim::Optimizer* optimizer, bool restore_rng) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "no such checkpoint file");
  std::istringstream in(verified_archive(read_file(path), path));
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(in);
  } catch (const c10::Error& e) {
    fail(path, fmt::format("not a wscsl checkpoint or corrupt ({})", e.what_without_backtrace()));
  }
  auto read_value = [&](const char* key) {
    c10::IValue v;
    if (!archive.try_read(key, v)) fail(path, fmt::format("checkpoint has no '{}' entry", key));
    return v;
  };
  if (read_value("format_version").toInt() != kFormatVersion)
    fail(path, fmt::format("checkpoint format {} is not supported (expected {})",
                           read_value("format_version").toInt(), kFormatVersion));
  TrainingState state;
  state.epoch = read_value("epoch").toInt();
  state.step = read_value("step").toInt();
  state.global_step = read_value("global_step").toInt();
  state.epoch_loss_sum = read_value("epoch_loss_sum").to<double>();
  state.epoch_loss_count = read_value("epoch_loss_count").toInt();
  state.best_value = read_value("best_value").to<double>();
  state.best_epoch = read_value("best_epoch").toInt();
  state.threads = read_value("threads").toInt();
  state.config = read_value("config").toStringRef();
  try {
    torch::serialize::InputArchive model_archive;
    if (!archive.try_read("model", model_archive)) fail(path, "checkpoint has no model");
    model.load(model_archive);
    if (optimizer) {
      torch::serialize::InputArchive optimizer_archive;
      if (!archive.try_read("optimizer", optimizer_archive))
        fail(path, "checkpoint has no optimizer state");
      optimizer->load(optimizer_archive);
    }
  } catch (const c10::Error& e) {
    fail(path, fmt::format("checkpoint does not fit this pipeline's model ({})",
                           e.what_without_backtrace()));
  }
  if (restore_rng) {
    torch::Tensor rng;
    if (!archive.try_read("rng", rng)) fail(path, "checkpoint has no RNG state");
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng);
  }
  return state;
}

}  // namespace wscsl::host
