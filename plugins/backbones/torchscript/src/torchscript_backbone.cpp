#include "torchscript_backbone.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/config/image_fields.hpp"
#include "wscsl/nn/script_module.hpp"
#include "wscsl/util/tensor_text.hpp"

namespace wscsl::torchscript_backbone {

Schema<TorchScriptBackboneOptions> TorchScriptBackbone::schema() {
  using O = TorchScriptBackboneOptions;
  Schema<O> s(
      "A backbone written in Python: a TorchScript module saved with torch.jit.save whose "
      "forward(images [B, C, H, W]) returns φ [B, D]. Its parameters and buffers train, are "
      "checkpointed and exported with the rest of the model; D is its `embedding_dim: int` "
      "attribute, else what one forward pass returns.");
  s.field("file", &O::file, "The TorchScript file (.pt), relative to the pipeline's folder.")
      .path()
      .required();
  s.field("trainable", &O::trainable,
          "Train the module's parameters; false keeps them as saved (a fixed feature extractor).");
  image_fields(s, "input", &O::input_channels, &O::input_height, &O::input_width);
  return s;
}

TorchScriptBackbone::TorchScriptBackbone(const Options& options)
    : script_(nn::load_script_module(options.file, {"forward"})) {
  embedding_dim_ = probe_embedding_dim(options);
  nn::mirror_script_tensors(*this, script_, options.trainable);
}

std::int64_t TorchScriptBackbone::probe_embedding_dim(const Options& options) {
  const std::vector<std::int64_t> shape = {2, options.input_channels, options.input_height,
                                           options.input_width};
  const std::string images = fmt::format("images [{}]", fmt::join(shape, ", "));
  torch::Tensor phi;
  {
    torch::NoGradGuard no_grad;
    script_.eval();
    phi = nn::run_script_method(script_, "forward", {torch::zeros(shape)}, options.file, images);
    script_.train();
  }
  if (phi.dim() != 2 || phi.size(0) != 2 || !phi.is_floating_point())
    throw DataError(fmt::format("{}: forward must return floating φ [B, D]; for {} it returned {}",
                                options.file, images, dtype_and_shape_of(phi)));
  if (script_.hasattr("embedding_dim")) {
    const c10::IValue declared = script_.attr("embedding_dim");
    if (!declared.isInt() || declared.toInt() != phi.size(1))
      throw DataError(fmt::format("{}: its embedding_dim attribute says {}, its forward returns {}",
                                  options.file, declared.isInt() ? declared.toInt() : -1,
                                  phi.size(1)));
  }
  return phi.size(1);
}

void TorchScriptBackbone::train(bool on) {
  torch::nn::Module::train(on);
  script_.train(on);
}

torch::Tensor TorchScriptBackbone::forward_images(const torch::Tensor& images) {
  return script_.forward({images}).toTensor();
}

}  // namespace wscsl::torchscript_backbone

WSCSL_PLUGIN(torchscript_backbone, "0.1.0",
             "Backbones written in Python: a TorchScript module's forward as φ") {
  registrar.add<wscsl::Backbone, wscsl::torchscript_backbone::TorchScriptBackbone>("torchscript");
}
