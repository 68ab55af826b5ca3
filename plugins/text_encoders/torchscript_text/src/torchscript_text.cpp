#include "torchscript_text.hpp"

#include <fmt/format.h>

#include "wscsl/config/limits.hpp"
#include "wscsl/nn/device.hpp"
#include "wscsl/nn/script_module.hpp"
#include "wscsl/util/tensor_text.hpp"

namespace wscsl::torchscript_text {

Schema<TorchScriptTextOptions> TorchScriptText::schema() {
  using O = TorchScriptTextOptions;
  Schema<O> s(
      "A text encoder written in Python: a TorchScript module saved with torch.jit.save whose "
      "forward(texts: List[str]) returns the features [B, E]. Its parameters and buffers train, "
      "are checkpointed and exported with the rest of the model; empty texts are not passed to "
      "it (they are absent).");
  s.field("file", &O::file, "The TorchScript file (.pt), relative to the pipeline's folder.")
      .path()
      .required();
  s.field("output_dim", &O::output_dim,
          "E, the size of the features forward returns (the backbone's embedding size, which the "
          "host requires).")
      .min(1)
      .max(kMaxLayerSize)
      .default_from(facts::backbone_embedding_dim);
  s.field("trainable", &O::trainable,
          "Train the module's parameters; false keeps them as saved (a fixed text model).");
  return s;
}

TorchScriptText::TorchScriptText(const Options& options)
    : options_(options), script_(nn::load_script_module(options.file, {"forward"})) {
  nn::mirror_script_tensors(*this, script_, options.trainable);
  // The size of what forward returns, checked now so that `wscsl check` reports it.
  torch::NoGradGuard no_grad;
  script_.eval();
  run({"a red dress", "black leather boots"});
  script_.train();
}

void TorchScriptText::train(bool on) {
  torch::nn::Module::train(on);
  script_.train(on);
}

torch::Tensor TorchScriptText::run(const std::vector<std::string>& texts) {
  const auto n = static_cast<std::int64_t>(texts.size());
  const std::string described = fmt::format("{} text{}", n, n == 1 ? "" : "s");
  c10::List<std::string> list;
  for (const std::string& t : texts)
    list.push_back(t);
  const torch::Tensor out =
      nn::run_script_method(script_, "forward", {c10::IValue(list)}, options_.file, described);
  if (!out.is_floating_point() || out.dim() != 2 || out.size(0) != n ||
      out.size(1) != options_.output_dim)
    throw DataError(fmt::format(
        "{}: forward returned {} for {}; expected floating [{}, {}] (output_dim, the backbone's "
        "embedding size)",
        options_.file, dtype_and_shape_of(out), described, n, options_.output_dim));
  return out;
}

TextFeatures TorchScriptText::encode_impl(const std::vector<std::string>& texts) {
  std::vector<std::string> present;
  std::vector<std::int64_t> rows;
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (!texts[i].empty()) {
      present.push_back(texts[i]);
      rows.push_back(static_cast<std::int64_t>(i));
    }
  const auto b = static_cast<std::int64_t>(texts.size());
  if (present.empty()) {
    return {torch::zeros({b, options_.output_dim}, torch::TensorOptions(nn::device_of(*this))),
            torch::Tensor()};
  }
  const torch::Tensor out = run(present);
  const torch::Tensor index = torch::tensor(rows, torch::kLong).to(out.device());
  return {torch::zeros({b, options_.output_dim}, out.options()).index_copy(0, index, out),
          torch::Tensor()};
}

}  // namespace wscsl::torchscript_text

WSCSL_PLUGIN(torchscript_text, "0.1.0",
             "Text encoders written in Python: a TorchScript module's forward(List[str])") {
  registrar.add<wscsl::TextEncoder, wscsl::torchscript_text::TorchScriptText>("torchscript_text");
}
