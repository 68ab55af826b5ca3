// The trainer's device check (host/src/train/device_check.hpp): every parameter and buffer of
// every component, and every tensor of a batch, is on the device the process trains on, or the
// run stops with one sentence naming the component, the tensor and its device. Tensors on the
// "meta" device stand for tensors a plugin left behind on another device than the placement's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <torch/torch.h>

#include "built_pipeline.hpp"
#include "pipelines.hpp"
#include "train/device_check.hpp"
#include "wscsl/error.hpp"

using namespace wscsl;
using namespace wscsl::host;

namespace {

// The message of the Error that `check` throws, or "" when it throws none.
template <class Check>
std::string refusal(Check check) {
  try {
    check();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' is not in: " << text;
}

}  // namespace

TEST(DeviceCheck, TheComponentsAreTheModelsAndOnItsDeviceTheyPass) {
  const Pipeline p = test::built_tiny_pipeline();
  const std::vector<ModelComponent> components = model_components(p);
  ASSERT_EQ(components.size(), 3u);  // backbone, condition module, one loss
  EXPECT_EQ(components[0].label, p.backbone->label());
  EXPECT_EQ(components[1].label, p.condition_module->label());
  EXPECT_EQ(components[2].label, p.losses[0].loss->label());
  std::size_t tensors = 0;
  for (const ModelComponent& c : components)
    tensors += c.module->parameters().size() + c.module->buffers().size();
  const auto model = p.model();
  EXPECT_EQ(tensors, model->parameters().size() + model->buffers().size());
  EXPECT_EQ(refusal([&] { require_on_device(components, torch::kCPU); }), "");
}

// A parameter made on another device than the model's (here the meta device: LibTorch 1.13 cannot
// move one there in place), deep in a component: in the set module g of DiscoverNet.
TEST(DeviceCheck, AParameterOnAnotherDeviceIsNamedWithItsComponentAndDevice) {
  const Pipeline p = test::built_tiny_pipeline();
  p.condition_module->named_children()["g"]->register_parameter("stray",
                                                                torch::zeros({2}, torch::kMeta));
  const std::string message = refusal([&] { require_on_device(model_components(p), torch::kCPU); });
  ASSERT_FALSE(message.empty()) << "a parameter on the meta device passed the check";
  expect_contains(message,
                  p.condition_module->label() +
                      " holds its parameter 'g.stray' on meta, and the model trains on cpu");
}

TEST(DeviceCheck, ABufferLeftOnAnotherDeviceIsNamed) {
  const Pipeline p = test::built_tiny_pipeline();
  p.backbone->register_buffer("stray", torch::zeros({2}, torch::kMeta));
  const std::string message = refusal([&] { require_on_device(model_components(p), torch::kCPU); });
  expect_contains(message, p.backbone->label() + " holds its buffer 'stray' on meta");
}

// The placement's device is not where the model is: its first tensor is named.
TEST(DeviceCheck, AModelOnAnotherDeviceThanThePlacementIsRefused) {
  const Pipeline p = test::built_tiny_pipeline();
  const std::string message =
      refusal([&] { require_on_device(model_components(p), torch::Device(torch::kMeta)); });
  expect_contains(message, p.backbone->label() + " holds its parameter '");
  expect_contains(message, "' on cpu, and the model trains on meta");
}

TEST(DeviceCheck, EveryTensorOfTheBatchIsChecked) {
  const auto images = [] { return torch::zeros({2, 3, 4, 4}); };
  TripletBatch batch{{images(), images(), images()}, torch::zeros({2}, torch::kLong), {}};
  EXPECT_EQ(refusal([&] { require_on_device(batch, torch::kCPU); }), "");
  TripletBatch unconditioned = batch;
  unconditioned.conditions = torch::Tensor();
  EXPECT_EQ(refusal([&] { require_on_device(unconditioned, torch::kCPU); }), "");

  TripletBatch close = batch;
  close.images.close = torch::zeros({2, 3, 4, 4}, torch::kMeta);
  expect_contains(refusal([&] { require_on_device(close, torch::kCPU); }),
                  "the training batch's close images are on meta, and the model trains on cpu");
  TripletBatch conditions = batch;
  conditions.conditions =
      torch::zeros({2}, torch::TensorOptions(torch::kLong).device(torch::kMeta));
  expect_contains(refusal([&] { require_on_device(conditions, torch::kCPU); }),
                  "the training batch's conditions are on meta");
  expect_contains(refusal([&] { require_on_device(batch, torch::Device(torch::kMeta)); }),
                  "the training batch's anchor images are on cpu, and the model trains on meta");
}
