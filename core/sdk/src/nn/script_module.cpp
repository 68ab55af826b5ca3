#include "wscsl/nn/script_module.hpp"

#include <fmt/format.h>
#include <torch/csrc/jit/serialization/import.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace wscsl::nn {
namespace {

namespace fs = std::filesystem;

// owner's submodule at the dotted `path` ("" for owner itself), made on first use.
torch::nn::Module& submodule(torch::nn::Module& owner, const std::string& path) {
  torch::nn::Module* at = &owner;
  std::size_t begin = 0;
  while (begin < path.size()) {
    const std::size_t end = std::min(path.find('.', begin), path.size());
    const std::string name = path.substr(begin, end - begin);
    std::shared_ptr<torch::nn::Module> child;
    for (const auto& c : at->named_children())
      if (c.key() == name) child = c.value();
    if (!child) child = at->register_module(name, std::make_shared<torch::nn::Module>(name));
    at = child.get();
    begin = end + 1;
  }
  return *at;
}

std::pair<std::string, std::string> split_last(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

}  // namespace

torch::jit::Module load_script_module(const fs::path& file,
                                      const std::vector<std::string>& methods) {
  const std::string problem = file_problem(file);
  if (!problem.empty())
    throw DataError(
        fmt::format("{}: {} (a module saved with torch.jit.save)", file.string(), problem));
  torch::jit::Module module;
  try {
    module = torch::jit::load(file.string(), torch::kCPU);
  } catch (const std::exception& e) {
    throw DataError(fmt::format(
        "{}: not a TorchScript module (save one with torch.jit.save(torch.jit.script(m), path)): "
        "{}",
        file.string(), script_error_line(e)));
  }
  for (const std::string& method : methods)
    if (!module.find_method(method))
      throw DataError(fmt::format(
          "{}: the TorchScript module has no method '{}' (torch.jit.script compiles only forward "
          "and what it calls: mark the method @torch.jit.export)",
          file.string(), method));
  return module;
}

void mirror_script_tensors(torch::nn::Module& owner, const torch::jit::Module& script,
                           bool trainable) {
  for (const auto& p : script.named_parameters(/*recurse=*/true)) {
    const auto [path, name] = split_last(p.name);
    submodule(owner, path).register_parameter(name, p.value, trainable && p.value.requires_grad());
  }
  for (const auto& b : script.named_buffers(/*recurse=*/true)) {
    const auto [path, name] = split_last(b.name);
    submodule(owner, path).register_buffer(name, b.value);
  }
}

torch::Tensor run_script_method(torch::jit::Module& script, const std::string& method,
                                std::vector<c10::IValue> inputs, const fs::path& file,
                                const std::string& inputs_text) {
  c10::IValue out;
  try {
    out = script.get_method(method)(std::move(inputs));
  } catch (const std::exception& e) {
    throw DataError(fmt::format("{}: {} failed on {}: {}", file.string(), method, inputs_text,
                                script_error_line(e)));
  }
  if (!out.isTensor())
    throw DataError(fmt::format("{}: {} returned a {} on {}, not a tensor", file.string(), method,
                                out.type()->repr_str(), inputs_text));
  return out.toTensor();
}

std::string script_error_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text.substr(text.rfind('\n') + 1);
}

}  // namespace wscsl::nn
