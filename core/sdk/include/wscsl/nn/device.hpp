// Where a module computes. The host puts the whole model on trainer.device; code that feeds a
// module tensors from elsewhere (evaluators read embedding tables on the CPU) moves them there.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

namespace wscsl::nn {

// The device of the module's first parameter or buffer; the CPU when it has none (such a module
// computes wherever its inputs are).
torch::Device device_of(const torch::nn::Module& module);

}  // namespace wscsl::nn
