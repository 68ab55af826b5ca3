#include "autocast_scope.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace wscsl::host {
namespace {

// LibTorch 2.4 and later name the device; 1.13 has one switch per device (deprecated since).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(c10::DeviceType device) {
  return at::autocast::is_autocast_enabled(device);
}
void enable_bf16_autocast(c10::DeviceType device, bool enabled) {
  at::autocast::set_autocast_dtype(device, at::kBFloat16);
  at::autocast::set_autocast_enabled(device, enabled);
}
#else
bool autocast_enabled(c10::DeviceType device) {
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled()
                                         : at::autocast::is_cpu_enabled();
}
void enable_bf16_autocast(c10::DeviceType device, bool enabled) {
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(enabled);
  }
}
#endif

}  // namespace

AutocastScope::AutocastScope(c10::DeviceType device)
    : device_(device), was_enabled_(autocast_enabled(device)) {
  enable_bf16_autocast(device, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  enable_bf16_autocast(device_, was_enabled_);
}

}  // namespace wscsl::host
