// Named tensors as PyTorch's state_dict() holds them, in the files torch.save and torch.load use,
// and loading them into a module with every mismatch reported by name.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

namespace wscsl::nn {

using StateDict = std::vector<std::pair<std::string, torch::Tensor>>;

// Reads a dict of tensors written by torch.save (PyTorch's zip format, the default since 1.6) or
// by write_state_dict. Throws wscsl::DataError with one sentence naming the file when it is
// unreadable, truncated or damaged, in PyTorch's pre-1.6 format, an OrderedDict (what
// model.state_dict() returns, which LibTorch's reader cannot rebuild), or holds a value that is not
// a tensor; the pre-1.6 format and OrderedDicts are converted by scripts/convert-weights.py.
StateDict read_state_dict(const std::filesystem::path& file);

// Writes `tensors` as a dict that torch.load reads in Python, atomically.
void write_state_dict(const std::filesystem::path& file, const StateDict& tensors);

// Which names may differ between a file and a module.
struct StateDictMatch {
  // File entries that are skipped (e.g. another network's head).
  std::function<bool(const std::string&)> ignored = [](const std::string&) { return false; };
  // Module entries the file may lack; they keep their values.
  std::function<bool(const std::string&)> optional = [](const std::string&) { return false; };
};

// Copies every tensor of `tensors` into the parameter or buffer of `module` with the same name
// (converted to its dtype). Returns one line per problem — a missing entry, an unexpected one, a
// shape that differs — and copies nothing when there is any.
std::vector<std::string> load_state_dict(torch::nn::Module& module, const StateDict& tensors,
                                         const StateDictMatch& match = {});

}  // namespace wscsl::nn
