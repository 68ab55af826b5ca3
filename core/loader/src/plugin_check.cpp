// The handshake check, kept free of dlopen so it can be tested on plain structs.
#include <fmt/format.h>

#include "wscsl/plugin/toolchain.hpp"
#include "wscsl/runtime/plugin_manager.hpp"
#include "wscsl/util/text.hpp"
#include "wscsl/version.hpp"

namespace wscsl {

HostVersions HostVersions::current() {
  HostVersions h;
  h.sdk_major = WSCSL_VERSION_MAJOR;
  h.sdk_minor = WSCSL_VERSION_MINOR;
  h.sdk_patch = WSCSL_VERSION_PATCH;
  h.torch_version = WSCSL_TORCH_IDENTITY;
  h.toolchain = WSCSL_TOOLCHAIN_FINGERPRINT;
  return h;
}

namespace {

std::string text_or(const char* s, const char* fallback) {
  return s ? s : fallback;
}

}  // namespace

std::string check_plugin_info(const wscsl_plugin_info* info, const std::filesystem::path& file,
                              const HostVersions& host, std::vector<std::string>& warnings) {
  const std::string path = file.string();
  if (!info) return fmt::format("{} returned no plugin information", path);
  constexpr auto kMinimumSize = sizeof(wscsl_plugin_info);
  if (info->struct_size < offsetof(wscsl_plugin_info, sdk_major))
    return fmt::format("{} is not a usable wscsl plugin: its info struct is {} bytes", path,
                       info->struct_size);
  if (info->abi_version != host.abi)
    return fmt::format(
        "plugin {} was built for plugin ABI {}, but this wscsl uses plugin ABI {}; rebuild it "
        "against this wscsl SDK",
        path, info->abi_version, host.abi);
  if (info->struct_size < kMinimumSize)
    return fmt::format("plugin {} has a {}-byte info struct, but plugin ABI {} needs {} bytes",
                       path, info->struct_size, host.abi, kMinimumSize);
  const std::string name = text_or(info->name, "");
  const std::string label = fmt::format("plugin '{}' ({})", name, path);
  if (info->sdk_major != host.sdk_major || info->sdk_minor > host.sdk_minor)
    return fmt::format(
        "{} was built against wscsl SDK {}.{}, but this host is wscsl {}.{}; "
        "rebuild it against this SDK",
        label, info->sdk_major, info->sdk_minor, host.sdk_major, host.sdk_minor);
  const std::string torch = text_or(info->torch_version, "unknown");
  // The full version and the CUDA flag: LibTorch keeps no C++ ABI even between patch releases.
  if (torch != host.torch_version)
    return fmt::format(
        "{} was built with LibTorch {}, but this host uses LibTorch {}; tensors and "
        "modules cannot be shared between them",
        label, torch, host.torch_version);
  const auto plugin_tokens = split(text_or(info->toolchain, ""), ';');
  const auto host_tokens = split(host.toolchain, ';');
  if (plugin_tokens.size() != 3 || host_tokens.size() != 3)
    return fmt::format("{} has an unreadable toolchain fingerprint '{}' (this host: '{}')", label,
                       text_or(info->toolchain, ""), host.toolchain);
  for (std::size_t i = 1; i < 3; ++i) {
    if (plugin_tokens[i] != host_tokens[i])
      return fmt::format(
          "{} was built with {} but this host with {}; C++ objects cannot be shared "
          "between them",
          label, plugin_tokens[i], host_tokens[i]);
  }
  if (plugin_tokens[0] != host_tokens[0])
    warnings.push_back(fmt::format("{} was compiled by {}, this host by {}", label,
                                   plugin_tokens[0], host_tokens[0]));
  const std::string stem = file.stem().string();
  const std::string expected_stem = "libwscsl_" + name;
  if (stem != expected_stem)
    return fmt::format("{} calls itself '{}', so its file must be named {}.so", path, name,
                       expected_stem);
  return {};
}

}  // namespace wscsl
