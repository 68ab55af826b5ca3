#include "wscsl/util/checkpoint_manifest.hpp"

#include <openssl/evp.h>

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/error.hpp"

namespace wscsl {
namespace {

constexpr std::size_t kSizeBytes = 8;
constexpr std::string_view kOlderMagic = "WSCSLCK2";  // format 2: a binary trailer, no manifest

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw DataError(fmt::format("{}: {}", path.string(), what));
}

template <typename T>
T required(const nlohmann::json& manifest, const char* key, const std::filesystem::path& path) {
  const auto it = manifest.find(key);
  if (it == manifest.end()) fail(path, fmt::format("damaged: its manifest has no '{}'", key));
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string())
      fail(path, fmt::format("damaged: its manifest's '{}' is not a string", key));
  } else if constexpr (std::is_unsigned_v<T>) {
    if (!it->is_number_unsigned())
      fail(path, fmt::format("damaged: its manifest's '{}' is not a non-negative integer", key));
  } else {
    if (!it->is_number_integer())
      fail(path, fmt::format("damaged: its manifest's '{}' is not an integer", key));
  }
  return it->get<T>();
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size())
    throw Error("internal: SHA-256 failed");
  std::string hex;
  hex.reserve(2 * digest.size());
  for (unsigned char byte : digest)
    hex += fmt::format("{:02x}", byte);
  return hex;
}

std::string seal_checkpoint(std::string_view archive, CheckpointManifest manifest) {
  const nlohmann::json json = {
      {"archive_bytes", archive.size()},         {"archive_sha256", sha256_hex(archive)},
      {"global_step", manifest.global_step},     {"config_sha256", manifest.config_sha256},
      {"wscsl_version", manifest.wscsl_version}, {"libtorch_version", manifest.libtorch_version},
  };
  std::string tail = json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::uint64_t size = tail.size();
  for (std::size_t i = 0; i < kSizeBytes; ++i, size >>= 8)
    tail.push_back(static_cast<char>(size & 0xff));
  tail.append(kCheckpointMagic);
  return tail;
}

SealedCheckpoint open_sealed_checkpoint(std::string_view bytes, const std::filesystem::path& path) {
  const std::size_t tail_bytes = kSizeBytes + kCheckpointMagic.size();
  const std::string_view magic = bytes.size() >= kCheckpointMagic.size()
                                     ? bytes.substr(bytes.size() - kCheckpointMagic.size())
                                     : std::string_view();
  if (magic == kOlderMagic)
    fail(path,
         "written by an older wscsl (checkpoint format 2, without a manifest); this wscsl "
         "reads format 3: train the run again");
  if (bytes.size() < tail_bytes || magic != kCheckpointMagic)
    fail(path, "not a wscsl checkpoint, or truncated (it does not end with wscsl's manifest)");
  std::uint64_t manifest_bytes = 0;
  for (std::size_t i = kSizeBytes; i-- > 0;)
    manifest_bytes =
        (manifest_bytes << 8) | static_cast<unsigned char>(bytes[bytes.size() - tail_bytes + i]);
  if (manifest_bytes > kMaxManifestBytes || manifest_bytes > bytes.size() - tail_bytes)
    fail(path, fmt::format("damaged: its manifest size ({} bytes) does not fit the file",
                           manifest_bytes));
  const std::size_t archive_bytes = bytes.size() - tail_bytes - manifest_bytes;
  const std::string_view text = bytes.substr(archive_bytes, manifest_bytes);
  const nlohmann::json json =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) fail(path, "damaged: its manifest is not a JSON object");
  SealedCheckpoint sealed;
  CheckpointManifest& m = sealed.manifest;
  m.archive_bytes = required<std::uint64_t>(json, "archive_bytes", path);
  m.archive_sha256 = required<std::string>(json, "archive_sha256", path);
  m.global_step = required<std::int64_t>(json, "global_step", path);
  m.config_sha256 = required<std::string>(json, "config_sha256", path);
  m.wscsl_version = required<std::string>(json, "wscsl_version", path);
  m.libtorch_version = required<std::string>(json, "libtorch_version", path);
  if (m.archive_bytes != archive_bytes)
    fail(path, fmt::format("damaged: its manifest covers {} bytes, the file holds {}",
                           m.archive_bytes, archive_bytes));
  sealed.archive = bytes.substr(0, archive_bytes);
  const std::string actual = sha256_hex(sealed.archive);
  if (actual != m.archive_sha256)
    fail(path, fmt::format("damaged: its bytes do not match the SHA-256 in its manifest "
                           "(expected {}…, got {}…); it is not loaded",
                           m.archive_sha256.substr(0, 12), actual.substr(0, 12)));
  return sealed;
}

}  // namespace wscsl
