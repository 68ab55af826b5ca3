// WSCSL_PLUGIN(name, version, description) { registrar.add<Interface, Impl>("type"); ... }
//
// Expands to the two C entry points the host looks for: the info function (always readable, so
// a mismatch can be explained) and the register function whose symbol carries the ABI number.
// Exceptions never cross the C boundary: they become an error message for the host.
#pragma once

#include <cstdio>
#include <exception>
#include <string_view>

#include "wscsl/plugin/abi.h"
#include "wscsl/plugin/registrar.hpp"
#include "wscsl/plugin/toolchain.hpp"
#include "wscsl/version.hpp"

#define WSCSL_PLUGIN_EXPORT __attribute__((visibility("default")))

#define WSCSL_DETAIL_CAT2(a, b) a##b
#define WSCSL_DETAIL_CAT(a, b) WSCSL_DETAIL_CAT2(a, b)
#define WSCSL_PLUGIN_REGISTER_FUNCTION \
  WSCSL_DETAIL_CAT(wscsl_plugin_register_abi, WSCSL_PLUGIN_ABI_VERSION)

#ifdef WSCSL_PLUGIN_FILE_NAME
#define WSCSL_DETAIL_CHECK_NAME(name)                                                \
  static_assert(std::string_view(#name) == std::string_view(WSCSL_PLUGIN_FILE_NAME), \
                "WSCSL_PLUGIN name must equal the name given to wscsl_add_plugin()");
#else
#define WSCSL_DETAIL_CHECK_NAME(name)
#endif

#define WSCSL_PLUGIN(name, version, description)                                                  \
  WSCSL_DETAIL_CHECK_NAME(name)                                                                   \
  static void wscsl_detail_register_components(::wscsl::Registrar& registrar);                    \
  extern "C" WSCSL_PLUGIN_EXPORT const struct wscsl_plugin_info* wscsl_plugin_info(void) {        \
    static const struct wscsl_plugin_info info = {sizeof(struct wscsl_plugin_info),               \
                                                  WSCSL_PLUGIN_ABI_VERSION,                       \
                                                  WSCSL_VERSION_MAJOR,                            \
                                                  WSCSL_VERSION_MINOR,                            \
                                                  WSCSL_VERSION_PATCH,                            \
                                                  #name,                                          \
                                                  version,                                        \
                                                  description,                                    \
                                                  WSCSL_TORCH_IDENTITY,                           \
                                                  WSCSL_TOOLCHAIN_FINGERPRINT};                   \
    return &info;                                                                                 \
  }                                                                                               \
  extern "C" WSCSL_PLUGIN_EXPORT int WSCSL_PLUGIN_REGISTER_FUNCTION(void* registrar, char* error, \
                                                                    size_t error_size) {          \
    try {                                                                                         \
      wscsl_detail_register_components(*static_cast<::wscsl::Registrar*>(registrar));             \
      return 0;                                                                                   \
    } catch (const std::exception& e) {                                                           \
      std::snprintf(error, error_size, "%s", e.what());                                           \
    } catch (...) {                                                                               \
      std::snprintf(error, error_size, "%s", "unknown exception");                                \
    }                                                                                             \
    return 1;                                                                                     \
  }                                                                                               \
  static void wscsl_detail_register_components([[maybe_unused]] ::wscsl::Registrar& registrar)
