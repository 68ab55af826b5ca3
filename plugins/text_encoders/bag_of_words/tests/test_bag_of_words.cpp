#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../src/bag_of_words.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/text_encoder_contract.hpp"

using namespace wscsl;
using wscsl::bag_of_words::fnv1a64;
using wscsl::bag_of_words::tokenize;

namespace {

std::shared_ptr<TextEncoder> encoder(const std::string& body, std::int64_t embedding_dim = 2) {
  return wscsl::testing::build<TextEncoder>("bag_of_words", body,
                                            wscsl::testing::facts(1, embedding_dim));
}

// Seven rows of two values, row r at index r.
const std::vector<std::vector<float>> kRows = {{1, 0}, {0, 1}, {2, -1}, {4, 4},
                                               {0, 0}, {3, 1}, {-1, 5}};

void set_rows(TextEncoder& e) {
  torch::NoGradGuard no_grad;
  torch::Tensor w = wscsl::testing::parameter(e, "weight");
  for (std::size_t r = 0; r < kRows.size(); ++r)
    w[static_cast<std::int64_t>(r)].copy_(torch::tensor(kRows[r]));
}

// |got − want| within 4 float32 rounding units of the largest magnitude involved: the pooled
// values are sums of three exact small integers, one division by 3 and, normalised, one square
// root and one division.
void expect_row(const torch::Tensor& got, std::vector<double> want) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  for (std::size_t j = 0; j < want.size(); ++j) {
    const double tolerance =
        4 * std::numeric_limits<float>::epsilon() * std::max(1.0, std::fabs(want[j]));
    EXPECT_NEAR(got[static_cast<std::int64_t>(j)].item<double>(), want[j], tolerance) << j;
  }
}

}  // namespace

TEST(BagOfWords, Fnv1a64MatchesTheReferenceTestVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(BagOfWords, WordsAreLowerCasedRunsOfAsciiLettersAndDigits) {
  EXPECT_EQ(tokenize("Red-dress, SIZE 12;\tcaf\xc3\xa9 x"),
            (std::vector<std::string>{"red", "dress", "size", "12", "caf", "x"}));
  EXPECT_EQ(tokenize("  !?  "), std::vector<std::string>{});
  EXPECT_EQ(tokenize(""), std::vector<std::string>{});
}

// The hashed rows, computed once by hand with Python (FNV-1a-64 mod 7): red → 3, dress → 2,
// blue → 0, coat → 2 (dress and coat collide).
TEST(BagOfWords, PoolsTheHashedRowsAsComputedByHand) {
  auto mean = encoder("buckets = 7\nnormalize = false");
  auto* bag = dynamic_cast<bag_of_words::BagOfWords*>(mean.get());
  ASSERT_NE(bag, nullptr);
  EXPECT_EQ(bag->bucket("red"), 3);
  EXPECT_EQ(bag->bucket("dress"), 2);
  EXPECT_EQ(bag->bucket("blue"), 0);
  EXPECT_EQ(bag->bucket("coat"), 2);
  set_rows(*mean);
  const TextFeatures m = mean->encode({"Red red DRESS!", "blue coat", "dress", "coat"});
  expect_row(m.features[0], {10.0 / 3, 7.0 / 3});  // (2·(4, 4) + (2, −1)) / 3
  expect_row(m.features[1], {1.5, -0.5});          // ((1, 0) + (2, −1)) / 2
  EXPECT_TRUE(torch::equal(m.features[2], m.features[3])) << "colliding words share a vector";

  auto sum = encoder("buckets = 7\nnormalize = false\npooling = \"sum\"");
  set_rows(*sum);
  expect_row(sum->encode({"Red red DRESS!"}).features[0], {10, 7});

  auto normalized = encoder("buckets = 7");
  set_rows(*normalized);
  const double norm = std::sqrt(149.0) / 3;  // ‖(10, 7) / 3‖
  expect_row(normalized->encode({"Red red DRESS!"}).features[0], {10.0 / 3 / norm, 7.0 / 3 / norm});
}

TEST(BagOfWords, OneBucketMakesEveryWordTheSameVector) {
  auto sum = encoder("buckets = 1\nnormalize = false\npooling = \"sum\"");
  const torch::Tensor row = wscsl::testing::parameter(*sum, "weight")[0].detach();
  const TextFeatures f = sum->encode({"a b", "zebra"});
  EXPECT_TRUE(torch::allclose(f.features[0], 2 * row));
  EXPECT_TRUE(torch::equal(f.features[1], row));
}

TEST(BagOfWords, KeepsTheTextEncoderContract) {
  auto e = encoder("buckets = 64", 8);
  EXPECT_EQ(e->output_dim(), 8);
  EXPECT_EQ(wscsl::testing::text_encoder_contract(*e, {"Red dress", "?!", "blue wool coat"},
                                                  {true, false, true}),
            "");
  auto summed = encoder("buckets = 64\npooling = \"sum\"\nnormalize = false", 8);
  EXPECT_EQ(wscsl::testing::text_encoder_contract(*summed, {"a", "b c"}, {true, true}), "");
}

TEST(BagOfWords, WordVectorsStartStandardNormal) {
  auto e = encoder("buckets = 4096", 64);
  const torch::Tensor w = wscsl::testing::parameter(*e, "weight").detach();
  EXPECT_EQ(w.sizes(), (std::vector<std::int64_t>{4096, 64}));
  // 262144 draws: the sample mean's standard error is 1/512 and the variance's about 1/362.
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 5.0 / 512);
  EXPECT_NEAR(w.var().item<double>(), 1.0, 5.0 / 362);
}

TEST(BagOfWords, RefusesBadOptionsInOneSentenceEach) {
  const auto error = [](const std::string& body) {
    return wscsl::testing::bind_diagnostics(Kind::TextEncoder, "bag_of_words", body,
                                            wscsl::testing::facts(1, 8))
        .format();
  };
  EXPECT_NE(error("buckets = 0").find("'buckets' must be in [1, 4194304], got 0"),
            std::string::npos)
      << error("buckets = 0");
  EXPECT_NE(error("pooling = \"max\"").find("valid choices: mean, sum"), std::string::npos)
      << error("pooling = \"max\"");
  EXPECT_EQ(error(""), "");
}

namespace {

// Breaks three rules: a parameter no text reaches, features that change from call to call in
// evaluation mode, and every text present.
class BrokenEncoder final : public TextEncoder {
 public:
  BrokenEncoder() {
    weight_ = register_parameter("weight", torch::ones({2}));
    register_parameter("unused", torch::ones({2}));
  }
  std::int64_t output_dim() const override { return 2; }

 protected:
  TextFeatures encode_impl(const std::vector<std::string>& texts) override {
    const auto b = static_cast<std::int64_t>(texts.size());
    return {weight_.expand({b, 2}) * torch::rand({b, 1}), torch::ones({b}, torch::kBool)};
  }

 private:
  torch::Tensor weight_;
};

}  // namespace

TEST(TextEncoderContract, ReportsEveryBrokenRule) {
  BrokenEncoder broken;
  EXPECT_EQ(
      wscsl::testing::text_encoder_contract(broken, {"a", "b", "unreadable"}, {true, true, false}),
      "text 2 (\"unreadable\") is present; expected absent\n"
      "no gradient reaches parameter 'unused'\n"
      "text 2 (\"unreadable\") is present; expected absent\n"
      "encoding the same batch twice in evaluation mode gave different features");
}

namespace {

// Features of NaN for the text "broken", finite for the others.
class NanEncoder final : public TextEncoder {
 public:
  std::int64_t output_dim() const override { return 2; }

 protected:
  TextFeatures encode_impl(const std::vector<std::string>& texts) override {
    torch::Tensor f = torch::ones({static_cast<std::int64_t>(texts.size()), 2});
    for (std::size_t i = 0; i < texts.size(); ++i)
      if (texts[i] == "broken") f[static_cast<std::int64_t>(i)][1] = NAN;
    return {f, {}};
  }
};

}  // namespace

// A non-finite feature names the encoder and the text, instead of surfacing as a non-finite loss.
TEST(TextEncoderContract, NonFiniteFeaturesOfAPresentTextAreRefused) {
  NanEncoder encoder;
  EXPECT_TRUE(encoder.encode({"a", ""}).features.isfinite().all().item<bool>());
  try {
    encoder.encode({"a", "broken"});
    FAIL() << "no error";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("broke its contract: the text features of 'broken' (text "
                                         "1 of the batch) hold a non-finite value"),
              std::string::npos)
        << e.what();
  }
}
