#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

#include "../src/torchscript_text.hpp"
#include "wscsl/data/index_files.hpp"
#include "wscsl/data/npy.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/text_encoder_contract.hpp"

using namespace wscsl;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kDim = 6;       // the model's output size (make_text_model.py)
constexpr std::int64_t kBuckets = 32;  // its trigram buckets

// make_text_model.py, run once per test process with Debian's python3-torch: the scripted model,
// the texts and what Python computed.
const fs::path& python_files() {
  static wscsl::testing::ScratchDir dir("torchscript_text");
  static const fs::path made = [] {
    const std::string command = std::string(WSCSL_PYTHON) + " " + WSCSL_TEXT_MODEL_SCRIPT + " " +
                                dir.path().string() + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    while (pipe && std::fgets(buffer, sizeof buffer, pipe))
      out += buffer;
    if (!pipe || ::pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + out);
    return dir.path();
  }();
  return made;
}

std::shared_ptr<TextEncoder> encoder(const std::string& more = "", std::int64_t dim = kDim) {
  return wscsl::testing::build<TextEncoder>(
      "torchscript_text", "file = \"" + (python_files() / "model.pt").string() + "\"\n" + more,
      wscsl::testing::facts(1, dim));
}

torch::Tensor from_npy(const fs::path& file) {
  NpyMatrix m = read_npy_matrix(file);
  return torch::tensor(m.values).reshape({m.rows, m.cols});
}

}  // namespace

// Each output is tanh(Σ_j W_ij x_j + b_i) over the 32 trigram means x_j, each itself a float32 sum
// of at most L (the longest padded text) increments of 1/n. In float32 (unit roundoff u = 2⁻²⁴)
// both sides' sums are within γ_m·scale of the exact value, m = 32 + 1 + L terms and
// scale = |W||x| + |b| (saved by Python); tanh is 1-Lipschitz and rounds once more. So
// |C++ − Python| ≤ 2·γ_m·scale + 2u.
TEST(TorchScriptText, EncodesAsPythonDoesOnTheSameTexts) {
  const std::vector<std::string> texts = read_lines(python_files() / "texts.txt");
  ASSERT_EQ(texts.size(), 5u);
  const torch::Tensor expected = from_npy(python_files() / "expected.npy");
  const torch::Tensor scale = from_npy(python_files() / "scale.npy");
  auto e = encoder();
  dynamic_cast<torch::nn::Module&>(*e).eval();
  const TextFeatures out = e->encode(texts);
  std::size_t longest = 0;
  for (const std::string& t : texts)
    longest = std::max(longest, t.size() + 2);
  const double u = std::numeric_limits<float>::epsilon() / 2;
  const double m = static_cast<double>(kBuckets + 1 + static_cast<std::int64_t>(longest));
  const double gamma = m * u / (1 - m * u);
  const torch::Tensor tolerance = 2 * gamma * scale + 2 * u;
  EXPECT_TRUE(((out.features.detach() - expected).abs() <= tolerance).all().item<bool>())
      << out.features << expected;
  EXPECT_TRUE(out.present.all().item<bool>());
}

TEST(TorchScriptText, EmptyTextsAreNotPassedToTheModuleAndAreZero) {
  const std::vector<std::string> texts = read_lines(python_files() / "texts.txt");
  auto e = encoder();
  dynamic_cast<torch::nn::Module&>(*e).eval();
  const TextFeatures alone = e->encode({texts[0], texts[1]});
  const TextFeatures mixed = e->encode({"", texts[0], "", texts[1]});
  EXPECT_TRUE(torch::equal(mixed.present, torch::tensor({false, true, false, true})));
  EXPECT_TRUE(torch::equal(mixed.features[1], alone.features[0]));
  EXPECT_TRUE(torch::equal(mixed.features[3], alone.features[1]));
  EXPECT_EQ(mixed.features[0].count_nonzero().item<std::int64_t>(), 0);
}

TEST(TorchScriptText, ItsParametersTrainUnderTheirPythonNames) {
  auto e = encoder();
  auto& m = dynamic_cast<torch::nn::Module&>(*e);
  EXPECT_EQ(wscsl::testing::parameter(m, "linear.weight").sizes(),
            (std::vector<std::int64_t>{kDim, kBuckets}));
  EXPECT_EQ(
      wscsl::testing::text_encoder_contract(*e, {"red dress", "", "boots"}, {true, false, true}),
      "");
  auto frozen = encoder("trainable = false");
  EXPECT_FALSE(wscsl::testing::parameter(dynamic_cast<torch::nn::Module&>(*frozen), "linear.weight")
                   .requires_grad());
  EXPECT_EQ(wscsl::testing::text_encoder_contract(*frozen, {"red dress", "boots"}, {true, true}),
            "");
}

TEST(TorchScriptText, AModuleOfAnotherSizeOrNoFileIsOneSentence) {
  const std::string model = (python_files() / "model.pt").string();
  try {
    encoder("", 5);
    ADD_FAILURE() << "a module returning 6 values was accepted for output_dim = 5";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()),
              model +
                  ": forward returned Float [2, 6] for 2 texts; expected floating [2, 5] "
                  "(output_dim, the backbone's embedding size)");
  }
  const std::string absent = (python_files() / "absent.pt").string();
  try {
    wscsl::testing::build<TextEncoder>("torchscript_text", "file = \"" + absent + "\"",
                                       wscsl::testing::facts(1, kDim));
    ADD_FAILURE() << "a missing file was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.pt: no such file"), std::string::npos) << e.what();
  }
}
