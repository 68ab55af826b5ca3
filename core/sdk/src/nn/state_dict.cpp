#include "wscsl/nn/state_dict.hpp"

#include <map>
#include <set>
#include <sstream>

#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::nn {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const fs::path& file, const std::string& why) {
  throw DataError(fmt::format("{}: {}", file.string(), why));
}

// torch.save's zip format, as torch::jit::pickle_save writes it but without TorchScript's type
// tag around the dict (torch.jit._pickle.restore_type_tag): PyTorch 2.6's torch.load, which reads
// only plain containers and tensors by default (weights_only=True), refuses the tag.
std::string torch_save_bytes(const c10::IValue& value) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&](const char* data, std::size_t size) { pickle.insert(pickle.end(), data, data + size); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::string archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    archive.append(static_cast<const char*>(data), size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(),
                                     writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

StateDict read_state_dict(const fs::path& file) {
  const std::string bytes = read_file(file);
  constexpr std::string_view kZip = "PK\x03\x04";
  constexpr std::string_view kLegacy = "\x80\x02\x8a\x0a";  // pickle protocol 2, then the magic
  constexpr std::string_view kOrderedDict =
      "\x80\x02"
      "ccollections\nOrderedDict\n";
  if (starts_with(bytes, kLegacy))
    refuse(file,
           "saved in PyTorch's format from before 1.6, which only Python can read: convert it "
           "once with scripts/convert-weights.py");
  if (!starts_with(bytes, kZip))
    refuse(file, "not a file written by torch.save (it is no zip archive)");
  c10::IValue value;
  try {
    // An istream, not caffe2's MemoryReadAdapter: LibTorch 1.13's copies past the end of a
    // file shorter than the zip reader's 4 KiB look-behind (AddressSanitizer caught it).
    std::istringstream archive(bytes);
    caffe2::serialize::PyTorchStreamReader reader(&archive);
    if (reader.hasRecord("data.pkl")) {
      const auto [data, size] = reader.getRecord("data.pkl");
      const std::string_view pickle(static_cast<const char*>(data.get()), size);
      // An OrderedDict at the top (tensors carry empty ones for their hooks further on).
      if (starts_with(pickle, kOrderedDict))
        refuse(file,
               "holds an OrderedDict (what model.state_dict() returns), which LibTorch's reader "
               "cannot rebuild: save dict(model.state_dict()) instead, or convert the file with "
               "scripts/convert-weights.py");
    }
    value = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const c10::Error& e) {
    const std::string why = e.what_without_backtrace();
    refuse(file, fmt::format("truncated or damaged: LibTorch cannot read it ({})",
                             why.substr(0, why.find('\n'))));
  }
  if (!value.isGenericDict())
    refuse(file, fmt::format("holds a {} where a dict of tensors was expected",
                             value.type()->repr_str()));
  StateDict tensors;
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString())
      refuse(file, fmt::format("has a {} key where names of tensors were expected",
                               entry.key().type()->repr_str()));
    const std::string& name = entry.key().toStringRef();
    if (!entry.value().isTensor())
      refuse(file,
             fmt::format("'{}' is a {}, not a tensor", name, entry.value().type()->repr_str()));
    tensors.emplace_back(name, entry.value().toTensor());
  }
  return tensors;
}

void write_state_dict(const fs::path& file, const StateDict& tensors) {
  c10::Dict<std::string, torch::Tensor> dict;
  for (const auto& [name, tensor] : tensors)
    dict.insert(name, tensor.detach().cpu().contiguous());
  write_file_atomically(file, torch_save_bytes(dict));
}

std::vector<std::string> load_state_dict(torch::nn::Module& module, const StateDict& tensors,
                                         const StateDictMatch& match) {
  std::map<std::string, torch::Tensor> own;
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    own.emplace(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true))
    own.emplace(b.key(), b.value());

  std::vector<std::string> problems;
  std::map<std::string, const torch::Tensor*> found;  // those that fit
  std::set<std::string> in_file;
  for (const auto& [name, tensor] : tensors) {
    if (match.ignored(name)) continue;
    in_file.insert(name);
    const auto it = own.find(name);
    if (it == own.end()) {
      problems.push_back(fmt::format("unexpected entry '{}'", name));
    } else if (!tensor.sizes().equals(it->second.sizes())) {
      problems.push_back(fmt::format("'{}' is {} in the file and {} here", name, shape_of(tensor),
                                     shape_of(it->second)));
    } else {
      found.emplace(name, &tensor);
    }
  }
  for (const auto& [name, tensor] : own)
    if (in_file.count(name) == 0 && !match.optional(name))
      problems.push_back(fmt::format("missing entry '{}'", name));
  if (!problems.empty()) return problems;

  torch::NoGradGuard no_grad;
  for (const auto& [name, tensor] : found)
    own.at(name).copy_(tensor->to(own.at(name).dtype()));
  return problems;
}

}  // namespace wscsl::nn
