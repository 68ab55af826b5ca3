#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../src/precomputed_text.hpp"
#include "npy_bytes.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/text_encoder_contract.hpp"

using namespace wscsl;
namespace fs = std::filesystem;

namespace {

// Three texts of F = 4 values; one key has commas.
const char* const kHglmm =
    "red dress,1,0,2,0\n"
    "shoes, black, size 9,0,3,0,4\n"
    "scarf,-1,-1,-1,-1\n";

struct Files {
  wscsl::testing::ScratchDir dir{"precomputed_text"};
  fs::path hglmm = dir.path() / "features.txt";
  Files() { wscsl::testing::write_text(hglmm, kHglmm); }
};

std::shared_ptr<TextEncoder> encoder(const fs::path& file, const std::string& more,
                                     std::int64_t embedding_dim) {
  return wscsl::testing::build<TextEncoder>("precomputed_text",
                                            "file = \"" + file.string() + "\"\ndim = 4\n" + more,
                                            wscsl::testing::facts(1, embedding_dim));
}

// A [rows, values / rows] float tensor.
torch::Tensor matrix(std::vector<float> values, std::int64_t rows) {
  const auto n = static_cast<std::int64_t>(values.size());
  return torch::tensor(values).reshape({rows, n / rows});
}

// |got − want| ≤ 8·u·scale: a handful of float32 roundings of terms of magnitude ≤ scale.
void expect_close(const torch::Tensor& got, const torch::Tensor& want, double scale) {
  ASSERT_EQ(got.sizes(), want.sizes());
  const double tolerance = 8 * std::numeric_limits<float>::epsilon() * scale;
  EXPECT_LE((got - want).abs().max().item<double>(), tolerance) << got << want;
}

}  // namespace

TEST(PrecomputedText, LooksTextsUpExactlyAndNormalisesThem) {
  Files f;
  auto e = encoder(f.hglmm, "head = \"none\"", 4);
  const TextFeatures out = e->encode({"shoes, black, size 9", "Red dress", "red dress", ""});
  EXPECT_TRUE(torch::equal(out.present, torch::tensor({true, false, true, false})));
  expect_close(out.features[0], torch::tensor({0.0f, 0.6f, 0.0f, 0.8f}), 1);  // (0, 3, 0, 4) / 5
  EXPECT_EQ(out.features[1].count_nonzero().item<std::int64_t>(), 0) << "absent: zero";
  expect_close(out.features[2], torch::tensor({1.0f, 0.0f, 2.0f, 0.0f}) / std::sqrt(5.0f), 1);
}

TEST(PrecomputedText, TheReleasedHeadIsLinearBatchNormReluLinearThenL2) {
  Files f;
  auto e = encoder(f.hglmm, "", 3);
  auto& m = dynamic_cast<torch::nn::Module&>(*e);
  const auto p = [&](const std::string& name) { return wscsl::testing::parameter(m, name); };
  EXPECT_EQ(p("fc1.0.weight").sizes(), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(p("fc1.1.weight").sizes(), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(p("fc2.weight").sizes(), (std::vector<std::int64_t>{3, 3}));
  ASSERT_NE(m.named_buffers().find("fc1.1.running_mean"), nullptr);

  const std::vector<std::string> texts = {"red dress", "scarf", "unknown", "shoes, black, size 9"};
  const torch::Tensor x = matrix({1, 0, 2, 0, -1, -1, -1, -1, 0, 0, 0, 0, 0, 3, 0, 4}, 4);
  // Training mode: batch statistics over all four rows, the absent one included (released code).
  m.train();
  const TextFeatures trained = e->encode(texts);
  const torch::Tensor h = x.mm(p("fc1.0.weight").t()) + p("fc1.0.bias");
  const torch::Tensor mean = h.mean(0);
  const torch::Tensor var = (h - mean).pow(2).mean(0);  // biased, as batch norm normalises
  const torch::Tensor bn = (h - mean) / (var + 1e-3).sqrt() * p("fc1.1.weight") + p("fc1.1.bias");
  torch::Tensor y = bn.relu().mm(p("fc2.weight").t()) + p("fc2.bias");
  y = y / (y.norm(2, 1, true) + 1e-10);
  y[2].zero_();
  expect_close(trained.features.detach(), y.detach(), 10);
  EXPECT_TRUE(torch::equal(trained.present, torch::tensor({true, true, false, true})));
  // The running statistics moved by momentum 0.01 from (0, 1): unbiased variance, as PyTorch.
  expect_close(m.named_buffers()["fc1.1.running_mean"], 0.01 * mean.detach(), 10);
  expect_close(m.named_buffers()["fc1.1.running_var"], 0.99 + 0.01 * h.var(0).detach(), 10);

  const TextFeatures present = e->encode({"red dress", "scarf"});
  EXPECT_TRUE(torch::allclose(present.features.norm(2, 1), torch::ones({2})));
}

TEST(PrecomputedText, TheLinearHeadIsOneLinearLayerThenL2) {
  Files f;
  auto e = encoder(f.hglmm, "head = \"linear\"", 3);
  auto& m = dynamic_cast<torch::nn::Module&>(*e);
  EXPECT_EQ(m.named_parameters().size(), 2u);
  const torch::Tensor w = wscsl::testing::parameter(m, "fc.weight").detach();
  const torch::Tensor b = wscsl::testing::parameter(m, "fc.bias").detach();
  torch::Tensor y = matrix({0, 3, 0, 4}, 1).mm(w.t()) + b;
  y = y / (y.norm(2, 1, true) + 1e-10);
  expect_close(e->encode({"shoes, black, size 9"}).features.detach(), y, 10);
}

TEST(PrecomputedText, KeepsTheTextEncoderContractWithEveryHead) {
  Files f;
  const std::vector<std::string> texts = {"red dress", "not in the file", "scarf",
                                          "shoes, black, size 9"};
  const std::vector<bool> present = {true, false, true, true};
  for (const std::string head : {"released", "linear"}) {
    auto e = encoder(f.hglmm, "head = \"" + head + "\"", 6);
    EXPECT_EQ(wscsl::testing::text_encoder_contract(*e, texts, present), "") << head;
  }
  auto none = encoder(f.hglmm, "head = \"none\"", 4);
  EXPECT_EQ(wscsl::testing::text_encoder_contract(*none, texts, present), "");
}

TEST(PrecomputedText, ReadsNpyMatricesWithTheirKeys) {
  wscsl::testing::ScratchDir dir("precomputed_text_npy");
  wscsl::testing::write_text(dir.path() / "f.npy",
                             npy_bytes::matrix({3, 4, 0, 0, 0, 0, 1, 0}, 2, 4));
  wscsl::testing::write_text(dir.path() / "keys.txt", "a, b\nc\n");
  auto e = wscsl::testing::build<TextEncoder>(
      "precomputed_text",
      "file = \"" + (dir.path() / "f.npy").string() + "\"\nformat = \"npy\"\nkeys = \"" +
          (dir.path() / "keys.txt").string() + "\"\nhead = \"none\"",
      wscsl::testing::facts(1, 4));
  EXPECT_EQ(dynamic_cast<precomputed_text::PrecomputedText&>(*e).feature_dim(), 4);
  const TextFeatures out = e->encode({"c", "a, b", "b"});
  expect_close(out.features, matrix({0, 0, 1, 0, 0.6f, 0.8f, 0, 0, 0, 0, 0, 0}, 3), 1);
}

TEST(PrecomputedText, RefusesInconsistentOptionsInOneSentence) {
  Files f;
  const auto diagnostics = [&](const std::string& body) {
    return wscsl::testing::bind_diagnostics(Kind::TextEncoder, "precomputed_text",
                                            "file = \"" + f.hglmm.string() + "\"\n" + body,
                                            wscsl::testing::facts(1, 4))
        .format();
  };
  EXPECT_NE(diagnostics("format = \"npy\"")
                .find("'keys': is required with format = \"npy\": the text file naming each row"),
            std::string::npos)
      << diagnostics("format = \"npy\"");
  EXPECT_NE(diagnostics("keys = \"k.txt\"").find("keys"), std::string::npos)
      << "keys is not read with format = \"hglmm\"";
  EXPECT_NE(diagnostics("format = \"npy\"\nkeys = \"k.txt\"\ndim = 4").find("dim"),
            std::string::npos)
      << "dim is not read with format = \"npy\"";
  EXPECT_EQ(diagnostics(""), "");

  try {
    encoder(f.hglmm, "head = \"none\"", 3);
    ADD_FAILURE() << "head = \"none\" with F ≠ E was accepted";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()),
              f.hglmm.string() +
                  ": its features have 4 values and head = \"none\" passes them on unchanged; "
                  "expected output_dim = 3 (the backbone's embedding size) to equal it, or a "
                  "head that maps them (\"linear\", \"released\")");
  }
  wscsl::testing::write_text(f.hglmm, "a,1,2,3,x\n");
  try {
    encoder(f.hglmm, "", 3);
    ADD_FAILURE() << "a malformed file was accepted";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()),
              f.hglmm.string() +
                  ":1: value 4 of 4 is 'x'; expected a finite decimal number within float32");
  }
}
