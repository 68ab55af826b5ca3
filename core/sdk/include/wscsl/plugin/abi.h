/* The C handshake between a plugin library and the wscsl host. Nothing here may use C++ types:
 * the host reads it from any library, including one built against another wscsl, and explains
 * a mismatch before it calls a single line of the plugin's C++. */
#ifndef WSCSL_PLUGIN_ABI_H
#define WSCSL_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Bump on ANY change to a plugin-visible interface: virtual functions, struct layouts, the
 * registrar. The number is pasted into the register symbol's name, so a stale plugin lacks the
 * symbol instead of being called with the wrong layout. */
#define WSCSL_PLUGIN_ABI_VERSION 13

#define WSCSL_PLUGIN_INFO_SYMBOL "wscsl_plugin_info"
#define WSCSL_PLUGIN_REGISTER_PREFIX "wscsl_plugin_register_abi"

#ifdef __cplusplus
extern "C" {
#endif

/* Append-only: the host checks struct_size before reading any field after abi_version. */
struct wscsl_plugin_info {
  uint32_t struct_size;
  uint32_t abi_version;
  uint32_t sdk_major;
  uint32_t sdk_minor;
  uint32_t sdk_patch;
  const char* name;    /* == the library file name without "libwscsl_" and ".so" */
  const char* version; /* the plugin's own version */
  const char* description;
  const char* torch_version; /* LibTorch the plugin was compiled against, "1.13.1 cpu" */
  const char* toolchain;     /* "gcc-12;libstdc++;cxx11abi=1", see toolchain.hpp */
};

typedef const struct wscsl_plugin_info* (*wscsl_plugin_info_fn)(void);
/* Returns 0 on success; otherwise writes a NUL-terminated message into error[error_size]. */
typedef int (*wscsl_plugin_register_fn)(void* registrar, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* WSCSL_PLUGIN_ABI_H */
