// A text encoder written in Python: a TorchScript module (torch.jit.save) whose
// forward(texts: List[str]) returns the features [B, E], trained and checkpointed with the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "wscsl/sdk.hpp"

namespace wscsl::torchscript_text {

struct TorchScriptTextOptions {
  std::string file;
  std::int64_t output_dim = 0;  // E, from the backbone
  bool trainable = true;
};

class TorchScriptText final : public TextEncoder {
 public:
  using Options = TorchScriptTextOptions;
  static Schema<Options> schema();
  explicit TorchScriptText(const Options& options);

  std::int64_t output_dim() const override { return options_.output_dim; }
  void train(bool on = true) override;

 protected:
  TextFeatures encode_impl(const std::vector<std::string>& texts) override;

 private:
  // forward on `texts` (none empty), checked to be floating [texts.size(), E].
  torch::Tensor run(const std::vector<std::string>& texts);

  Options options_;
  torch::jit::Module script_;
};

}  // namespace wscsl::torchscript_text
