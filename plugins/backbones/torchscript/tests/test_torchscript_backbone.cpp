#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include <torch/cuda.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "../src/torchscript_backbone.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

using namespace wscsl;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kDim = 5;

// A scripted linear backbone for 1 × 4 × 4 images, as torch.jit.script would make one in Python:
// φ = flatten(images) Wᵀ · sub.scale, doubled in training mode (to see the mode reach it), and a
// parameter saved with requires_grad = False.
torch::jit::Module linear_script(const std::string& forward_source, bool with_dim_attribute = true,
                                 std::int64_t declared_dim = kDim) {
  torch::jit::Module sub("sub");
  sub.register_attribute("training", c10::BoolType::get(), true);
  sub.register_buffer("scale", torch::full({1}, 3.0));
  torch::jit::Module m("linear");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight", torch::randn({kDim, 16}).requires_grad_(), false);
  m.register_parameter("frozen_bias", torch::zeros({kDim}), false);  // requires_grad = False
  m.register_module("sub", sub);
  if (with_dim_attribute) m.register_attribute("embedding_dim", c10::IntType::get(), declared_dim);
  m.define(forward_source);
  return m;
}

const char* const kForward = R"(
def forward(self, images):
    phi = images.flatten(1).mm(self.weight.t()) * self.sub.scale
    if self.training:
        phi = phi * 2.0
    return phi
)";

fs::path save(const torch::jit::Module& m, const wscsl::testing::ScratchDir& dir,
              const std::string& name = "backbone.pt") {
  const fs::path file = dir.path() / name;
  m.save(file.string());
  return file;
}

std::shared_ptr<Backbone> backbone_from(const fs::path& file, const std::string& more = "") {
  return wscsl::testing::build<Backbone>("torchscript", "file = \"" + file.string() + "\"\n" + more,
                                         wscsl::testing::with_images({}, 1, 4, 4));
}

std::string build_error(const fs::path& file) {
  try {
    backbone_from(file);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

torch::nn::Module& module_of(Backbone& b) {
  return dynamic_cast<torch::nn::Module&>(b);
}

}  // namespace

TEST(TorchScriptBackbone, EmbedsAsTheScriptAndHonoursTrainAndEval) {
  wscsl::testing::ScratchDir dir("torchscript_backbone");
  torch::jit::Module script = linear_script(kForward);
  auto b = backbone_from(save(script, dir));
  EXPECT_EQ(b->embedding_dim(), kDim);
  const torch::Tensor images = torch::rand({3, 1, 4, 4});
  const torch::Tensor weight = (*script.named_parameters().begin()).value;
  const torch::Tensor expected = images.flatten(1).mm(weight.t()) * 3.0;
  module_of(*b).eval();
  EXPECT_TRUE(torch::allclose(b->embed(images), expected));
  module_of(*b).train();
  EXPECT_TRUE(torch::allclose(b->embed(images), expected * 2.0));
}

TEST(TorchScriptBackbone, ItsTensorsTrainUnderTheirPythonNames) {
  wscsl::testing::ScratchDir dir("torchscript_backbone");
  auto b = backbone_from(save(linear_script(kForward), dir));
  auto& m = module_of(*b);
  ASSERT_NE(m.named_parameters().find("weight"), nullptr);
  ASSERT_NE(m.named_buffers().find("sub.scale"), nullptr);
  EXPECT_TRUE(m.named_parameters().find("weight")->requires_grad());
  ASSERT_NE(m.named_parameters().find("frozen_bias"), nullptr);
  EXPECT_FALSE(m.named_parameters().find("frozen_bias")->requires_grad())
      << "a parameter frozen in Python stays frozen";

  const torch::Tensor images = torch::rand({3, 1, 4, 4});
  const torch::Tensor before = b->embed(images).detach();
  torch::optim::SGD sgd(m.parameters(), torch::optim::SGDOptions(0.1));
  b->embed(images).pow(2).sum().backward();
  sgd.step();
  EXPECT_FALSE(torch::allclose(b->embed(images), before)) << "the script computes with the "
                                                             "parameters the optimiser updated";

  auto frozen = backbone_from(save(linear_script(kForward), dir, "frozen.pt"), "trainable = false");
  EXPECT_FALSE(module_of(*frozen).named_parameters().find("weight")->requires_grad());
}

// The host moves the model to the training device with Module::to; the script computes with the
// moved tensors because they are the ones mirrored. A conversion to float64 takes the same path
// where there is no GPU.
TEST(TorchScriptBackbone, TheScriptFollowsTheModuleToAnotherTypeOrDevice) {
  wscsl::testing::ScratchDir dir("torchscript_backbone");
  auto b = backbone_from(save(linear_script(kForward), dir));
  module_of(*b).eval();
  module_of(*b).to(torch::kDouble);
  const torch::Tensor images = torch::rand({3, 1, 4, 4}, torch::kDouble);
  const torch::Tensor weight = module_of(*b).named_parameters().find("weight")->detach();
  const torch::Tensor phi = b->embed(images);
  EXPECT_EQ(phi.scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::allclose(phi, images.flatten(1).mm(weight.t()) * 3.0));
  if (torch::cuda::is_available()) {
    module_of(*b).to(torch::kCUDA);
    EXPECT_EQ(b->embed(images.cuda()).device().type(), torch::kCUDA);
  }
}

TEST(TorchScriptBackbone, ACheckpointRestoresTheScriptsTensors) {
  wscsl::testing::ScratchDir dir("torchscript_backbone");
  const fs::path file = save(linear_script(kForward), dir);
  auto trained = backbone_from(file);
  {
    torch::NoGradGuard no_grad;
    module_of(*trained).named_parameters().find("weight")->mul_(-2.0);
    module_of(*trained).named_buffers().find("sub.scale")->fill_(0.5);
  }
  torch::serialize::OutputArchive out;
  module_of(*trained).save(out);
  std::ostringstream bytes;
  out.save_to(bytes);

  auto restored = backbone_from(file);
  std::istringstream in_bytes(bytes.str());
  torch::serialize::InputArchive in;
  in.load_from(in_bytes);
  module_of(*restored).load(in);
  const torch::Tensor images = torch::rand({2, 1, 4, 4});
  module_of(*trained).eval();
  module_of(*restored).eval();
  EXPECT_TRUE(torch::equal(restored->embed(images), trained->embed(images)));
}

TEST(TorchScriptBackbone, EveryUnusableFileIsOneSentenceAtBuildTime) {
  wscsl::testing::ScratchDir dir("torchscript_backbone");
  EXPECT_NE(build_error(dir.path() / "absent.pt").find("absent.pt: no such file"),
            std::string::npos);
  // Something is there, but not a file a module can be read from: said so, not "no such file".
  const fs::path fifo = dir.path() / "fifo.pt";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(build_error(fifo).find("fifo.pt: is a FIFO; expected a regular file"),
            std::string::npos)
      << build_error(fifo);
  const fs::path zero = dir.path() / "zero.pt";
  fs::create_symlink("/dev/zero", zero);
  EXPECT_NE(build_error(zero).find("zero.pt: is a character device"), std::string::npos)
      << build_error(zero);

  const fs::path text = dir.path() / "text.pt";
  std::ofstream(text) << "def forward(self, x): return x\n";
  EXPECT_NE(build_error(text).find("text.pt: not a TorchScript module"), std::string::npos);

  const std::string no_forward = build_error(save(linear_script(R"(
def embed(self, images):
    return images.flatten(1)
)"),
                                                  dir, "no_forward.pt"));
  EXPECT_NE(no_forward.find("has no method 'forward'"), std::string::npos) << no_forward;
  EXPECT_NE(no_forward.find("mark the method @torch.jit.export"), std::string::npos) << no_forward;

  const std::string flat = build_error(save(linear_script(R"(
def forward(self, images):
    return images.flatten()
)"),
                                            dir, "flat.pt"));
  EXPECT_NE(flat.find("forward must return floating φ [B, D]; for images [2, 1, 4, 4] it "
                      "returned Float [32]"),
            std::string::npos)
      << flat;

  const std::string failing = build_error(save(linear_script(R"(
def forward(self, images):
    return images.flatten(1).mm(self.weight)
)"),
                                               dir, "failing.pt"));
  // PyTorch's words after "RuntimeError: " differ by version ("mm: mat1 and mat2…" in 2.x).
  EXPECT_NE(failing.find("forward failed on images [2, 1, 4, 4]: RuntimeError: "),
            std::string::npos)
      << failing;
  EXPECT_NE(failing.find("mat1 and mat2 shapes cannot be multiplied"), std::string::npos)
      << failing;

  const std::string wrong_dim =
      build_error(save(linear_script(kForward, true, 7), dir, "wrong_dim.pt"));
  EXPECT_NE(wrong_dim.find("its embedding_dim attribute says 7, its forward returns 5"),
            std::string::npos)
      << wrong_dim;

  auto undeclared = backbone_from(save(linear_script(kForward, false), dir, "undeclared.pt"));
  EXPECT_EQ(undeclared->embedding_dim(), kDim);
}
