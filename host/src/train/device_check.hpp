// Nothing of a training step runs on the CPU by accident: every parameter and buffer of every
// component that holds tensors — backbone, text encoders, condition module (its masks and anchors
// included), the losses that own modules — and every tensor of a batch is on the device the
// process trains on (its placement). The trainer checks the model once it is on that device (a
// checkpoint loaded) and the first batch it copies there; a tensor elsewhere stops the run with one
// sentence naming the component, the tensor and its device.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "pipeline/pipeline.hpp"
#include "training_step.hpp"

namespace wscsl::host {

// A component as the check names it: its label ("condition_module 'csn_masks' (plugin …)"), else
// its name in the model ("condition_module"), and its module.
struct ModelComponent {
  std::string label;
  const torch::nn::Module* module = nullptr;
};

// The components of Pipeline::model(), in its order: backbone, text encoders, condition module,
// losses.
std::vector<ModelComponent> model_components(const Pipeline& pipeline);

// Throws Error naming the first parameter or buffer of `components` that is not on `device`.
// A device without an index ("cuda") means the current one of its type, as Module::to does.
void require_on_device(const std::vector<ModelComponent>& components, torch::Device device);

// Throws Error naming the first tensor of `batch` (images by role, conditions) not on `device`.
void require_on_device(const TripletBatch& batch, torch::Device device);

}  // namespace wscsl::host
