#include "wscsl/nn/device.hpp"

namespace wscsl::nn {

torch::Device device_of(const torch::nn::Module& module) {
  if (const auto parameters = module.parameters(); !parameters.empty())
    return parameters.front().device();
  if (const auto buffers = module.buffers(); !buffers.empty()) return buffers.front().device();
  return torch::kCPU;
}

}  // namespace wscsl::nn
