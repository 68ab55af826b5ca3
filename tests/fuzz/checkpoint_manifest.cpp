// The checkpoint manifest: arbitrary bytes are refused or opened; and the input, sealed as an
// archive, must open again to exactly itself and its manifest.
#include <stdexcept>

#include "fuzz_target.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_text(data, size, [](const std::string& bytes) {
    try {
      wscsl::open_sealed_checkpoint(bytes, "fuzz.pt");
    } catch (const wscsl::DataError&) {
    }
    wscsl::CheckpointManifest manifest;
    manifest.global_step = static_cast<std::int64_t>(bytes.size()) * 7 - 3;
    manifest.config_sha256 = wscsl::sha256_hex(bytes.substr(0, bytes.size() / 2));
    manifest.wscsl_version = manifest.config_sha256.substr(0, 8);
    manifest.libtorch_version = "1.13.1";
    const std::string sealed = bytes + wscsl::seal_checkpoint(bytes, manifest);
    const wscsl::SealedCheckpoint opened = wscsl::open_sealed_checkpoint(sealed, "sealed.pt");
    if (opened.archive != bytes || opened.manifest.global_step != manifest.global_step ||
        opened.manifest.wscsl_version != manifest.wscsl_version)
      throw std::logic_error("a sealed checkpoint did not open to itself");
  });
}
