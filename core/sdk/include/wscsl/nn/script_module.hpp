// TorchScript modules (saved with torch.jit.save in Python) as parts of a wscsl model: loaded
// with one clear sentence when they cannot be, and their tensors mirrored into the plugin's own
// module tree so that optimisers, checkpoints and export-weights see them under their Python names.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>
#include <torch/nn/module.h>

namespace wscsl::nn {

// Loads `file` onto the CPU. Throws wscsl::DataError naming the file when it is missing or is not
// a TorchScript archive, and when it lacks any of `methods` (e.g. {"forward"}).
torch::jit::Module load_script_module(const std::filesystem::path& file,
                                      const std::vector<std::string>& methods);

// Registers every parameter and buffer of `script` in `owner` under the same dotted names (a
// parameter "layers.0.weight" becomes owner's submodule "layers", its submodule "0", parameter
// "weight"), sharing the tensors: what an optimiser or a checkpoint writes into them, the script
// computes with. Parameters keep the requires_grad they were saved with (frozen in Python, frozen
// here) unless `trainable` is false, which freezes them all.
void mirror_script_tensors(torch::nn::Module& owner, const torch::jit::Module& script,
                           bool trainable);

// Runs `method` of `script` on `inputs` (described in messages as `inputs_text`, e.g. "images
// [2, 3, 32, 32]"), for the checks a plugin makes when it is built. Throws wscsl::DataError naming
// `file` when the method fails or returns anything but a tensor.
torch::Tensor run_script_method(torch::jit::Module& script, const std::string& method,
                                std::vector<c10::IValue> inputs, const std::filesystem::path& file,
                                const std::string& inputs_text);

// The line of a TorchScript interpreter error that says what failed (its last non-empty line,
// after the traceback), e.g. "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x16 and
// 5x16)".
std::string script_error_line(const std::exception& e);

}  // namespace wscsl::nn
