#include "device_check.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

// `device` with the index a tensor made there gets ("cuda" → "cuda:0"), so that it compares
// equal to the devices of tensors moved there.
torch::Device indexed(torch::Device device) {
  if (device.has_index() || device.is_cpu()) return device;
  return torch::empty({0}, torch::TensorOptions().device(device)).device();
}

bool on(const torch::Tensor& t, torch::Device device) {
  return !t.defined() || t.device() == device;
}

std::string stray(const std::string& who, const char* what, const std::string& name,
                  const torch::Tensor& t, torch::Device device) {
  return fmt::format(
      "{} holds {} '{}' on {}, and the model trains on {}: every tensor of a component must "
      "be registered (register_parameter, register_buffer, register_module) so that it moves "
      "with the model, and none made after it moved (docs/distributed.md, Devices)",
      who, what, name, t.device().str(), device.str());
}

}  // namespace

std::vector<ModelComponent> model_components(const Pipeline& pipeline) {
  std::vector<ModelComponent> out;
  const auto add = [&out](const Component& c, const torch::nn::Module& m, std::string name) {
    out.push_back({c.label().empty() ? std::move(name) : c.label(), &m});
  };
  add(*pipeline.backbone, *pipeline.backbone, "backbone");
  for (const NamedTextEncoder& t : pipeline.text_encoders)
    add(*t.encoder, *t.encoder, "text_encoder_" + t.name);
  add(*pipeline.condition_module, *pipeline.condition_module, "condition_module");
  for (std::size_t i = 0; i < pipeline.losses.size(); ++i)
    add(*pipeline.losses[i].loss, *pipeline.losses[i].loss, fmt::format("loss_{}", i));
  return out;
}

void require_on_device(const std::vector<ModelComponent>& components, torch::Device device) {
  const torch::Device expected = indexed(device);
  for (const ModelComponent& c : components) {
    for (const auto& p : c.module->named_parameters())
      if (!on(p.value(), expected))
        throw Error(stray(c.label, "its parameter", p.key(), p.value(), expected));
    for (const auto& b : c.module->named_buffers())
      if (!on(b.value(), expected))
        throw Error(stray(c.label, "its buffer", b.key(), b.value(), expected));
  }
}

void require_on_device(const TripletBatch& batch, torch::Device device) {
  const torch::Device expected = indexed(device);
  const std::pair<const char*, const torch::Tensor*> tensors[] = {
      {"anchor images", &batch.images.anchor},
      {"close images", &batch.images.close},
      {"far images", &batch.images.far},
      {"conditions", &batch.conditions}};
  for (const auto& [name, t] : tensors)
    if (!on(*t, expected))
      throw Error(fmt::format(
          "the training batch's {} are on {}, and the model trains on {}: the trainer copies "
          "every tensor of a batch to the model's device before the step (TripletBatch::to)",
          name, t->device().str(), expected.str()));
}

}  // namespace wscsl::host
