// The probe of `wscsl check` (host/src/pipeline/probe.hpp).
#include <gtest/gtest.h>

#include "built_pipeline.hpp"
#include "pipeline/probe.hpp"
#include "pipelines.hpp"

using namespace wscsl;
using namespace wscsl::host;

namespace {

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors)
    out.push_back(t.detach().clone());
  return out;
}

void expect_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
}

}  // namespace

TEST(Probe, RunsEveryComponentAndLeavesTheModelAndTheRandomStreamAsTheyWere) {
  const Pipeline p = test::built_tiny_pipeline();
  const auto model = p.model();
  const std::vector<torch::Tensor> parameters = copies(model->parameters());
  const std::vector<torch::Tensor> buffers = copies(model->buffers());
  ASSERT_FALSE(buffers.empty());  // the convnet's batch-norm statistics, which training moves
  torch::manual_seed(7);
  const ProbeReport report = probe_pipeline(p, {});
  const torch::Tensor after_probe = torch::rand({8});
  torch::manual_seed(7);
  EXPECT_TRUE(torch::equal(after_probe, torch::rand({8})));
  expect_equal(copies(model->parameters()), parameters);
  expect_equal(copies(model->buffers()), buffers);
  EXPECT_TRUE(model->is_training());
  // φ and ψ of the 12 items of the 4 probe triplets; the weights of the triplets.
  EXPECT_EQ(report.ran, (std::vector<std::string>{"φ Float [12, 8]", "ψ Float [12, 4, 8]",
                                                  "weights Float [4, 4]", "loss 'margin'",
                                                  "the evaluators' inputs"}));
  EXPECT_GT(report.milliseconds, 0.0);
}

TEST(Probe, ASkippedComponentIsReplacedByRandomTensorsOfItsDeclaredShapes) {
  const ProbeReport report =
      probe_pipeline(test::built_tiny_pipeline(), {Kind::Backbone, Kind::ConditionModule});
  EXPECT_EQ(report.ran,
            (std::vector<std::string>{"φ skipped (random [12, 8])", "ψ skipped (random [12, 4, 8])",
                                      "weights skipped (random [4, 4])", "loss 'margin'"}));
}

namespace {

// The tiny pipeline with ASEN on the convnet's last feature map (8 channels, 16 × 16).
std::string asen_pipeline() {
  std::string text = test::tiny_pipeline();
  const std::string module = "type = \"discovernet\"\npairs = 2";
  text.replace(text.find(module), module.size(),
               "type = \"asen\"\nattribute_dim = 8\ncommon_dim = 4\nembedding_dim = 6");
  return text;
}

}  // namespace

TEST(Probe, AModuleThatNeedsTheFeatureMapIsGivenItAndItsAttentionMapsRun) {
  const ProbeReport report = probe_pipeline(test::built_pipeline(asen_pipeline()), {});
  // 4 conditions (Fashion-CRB's); the convnet's two stages pool its 32-px images once, to 16 × 16.
  EXPECT_EQ(report.ran,
            (std::vector<std::string>{
                "φ Float [12, 8]", "ψ Float [12, 4, 6]", "weights Float [4, 4]", "loss 'margin'",
                "attention maps Float [4, 4, 16, 16]", "the evaluators' inputs"}));
  // A skipped backbone's map is made up with its declared channels.
  const ProbeReport skipped =
      probe_pipeline(test::built_pipeline(asen_pipeline()), {Kind::Backbone});
  EXPECT_EQ(skipped.ran.at(1), "ψ Float [12, 4, 6]");
  EXPECT_EQ(skipped.ran.at(4), "attention maps Float [4, 4, 7, 7]");
}
