// trainer.precision = "bf16-mixed": the forward of a training step under LibTorch's autocast in
// bfloat16, as PyTorch's torch.autocast(device_type, dtype=torch.bfloat16) and Lightning's
// precision="bf16-mixed" — matrix products and convolutions in bfloat16, reductions, norms and
// the loss in float32, weights, gradients and optimiser state in float32.
#pragma once

#include <c10/core/DeviceType.h>

namespace wscsl::host {

// Autocast to bfloat16 on `device` for the scope's lifetime; the cast weights it caches are
// released when the outermost scope ends (LibTorch keeps them per thread until then).
class AutocastScope {
 public:
  explicit AutocastScope(c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
};

}  // namespace wscsl::host
