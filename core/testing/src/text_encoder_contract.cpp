#include "wscsl/testing/text_encoder_contract.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::testing {
namespace {

// Returns whether the shapes were right (the other checks need them).
bool check_batch(TextEncoder& encoder, const std::vector<std::string>& texts,
                 const std::vector<bool>& expected_present, const TextFeatures& out,
                 std::vector<std::string>& problems) {
  const auto b = static_cast<std::int64_t>(texts.size());
  if (!out.features.defined() || !out.features.is_floating_point() || out.features.dim() != 2 ||
      out.features.size(0) != b || out.features.size(1) != encoder.output_dim()) {
    problems.push_back(fmt::format("features are {}; expected floating [{}, {}]",
                                   dtype_and_shape_of(out.features), b, encoder.output_dim()));
    return false;
  }
  if (!out.present.defined() || out.present.scalar_type() != torch::kBool ||
      out.present.sizes() != torch::IntArrayRef{b}) {
    problems.push_back(
        fmt::format("present is {}; expected Bool [{}]", dtype_and_shape_of(out.present), b));
    return false;
  }
  if (out.present.device() != out.features.device())
    problems.push_back("present and the features are on different devices");
  const torch::Tensor features = out.features.detach().to(torch::kCPU);
  const torch::Tensor present = out.present.to(torch::kCPU);
  for (std::int64_t i = 0; i < b; ++i) {
    const std::string& text = texts[static_cast<std::size_t>(i)];
    const bool expected = expected_present[static_cast<std::size_t>(i)];
    const bool got = present[i].item<bool>();
    if (got != expected)
      problems.push_back(fmt::format("text {} ({}) is {}; expected {}", i, quote_toml(text),
                                     got ? "present" : "absent", expected ? "present" : "absent"));
    if (!got && features[i].count_nonzero().item<std::int64_t>() != 0)
      problems.push_back(
          fmt::format("text {} ({}) is absent but its row is not zero", i, quote_toml(text)));
    if (got && !torch::isfinite(features[i]).all().item<bool>())
      problems.push_back(fmt::format("text {} ({}) has non-finite features", i, quote_toml(text)));
  }
  return true;
}

void check_gradients(TextEncoder& encoder, const TextFeatures& out,
                     std::vector<std::string>& problems) {
  if (!out.features.requires_grad()) {
    for (const auto& p : encoder.named_parameters())
      if (p.value().requires_grad()) {
        problems.push_back(fmt::format(
            "the features do not require a gradient, yet parameter '{}' is trainable", p.key()));
        return;
      }
    return;
  }
  // A loss with a different weight for every feature, so that no gradient cancels by symmetry.
  const torch::Tensor weights =
      torch::linspace(1.0, 2.0, out.features.numel(), out.features.options())
          .reshape(out.features.sizes());
  (out.features * weights).sum().backward();
  for (const auto& p : encoder.named_parameters()) {
    if (!p.value().requires_grad()) continue;
    const torch::Tensor& grad = p.value().grad();
    if (!grad.defined())
      problems.push_back(fmt::format("no gradient reaches parameter '{}'", p.key()));
    else if (grad.count_nonzero().item<std::int64_t>() == 0)
      problems.push_back(fmt::format("the gradient of parameter '{}' is zero", p.key()));
  }
  for (auto& p : encoder.parameters())
    p.mutable_grad() = torch::Tensor();
}

}  // namespace

std::string text_encoder_contract(TextEncoder& encoder, const std::vector<std::string>& texts,
                                  const std::vector<bool>& expected_present) {
  if (texts.size() != expected_present.size())
    throw Error("text_encoder_contract: one expected presence per text");
  std::vector<std::string> batch = texts;
  batch.emplace_back();
  std::vector<bool> expected = expected_present;
  expected.push_back(false);
  std::vector<std::string> problems;
  const bool was_training = encoder.is_training();

  encoder.train();
  const TextFeatures trained = encoder.encode(batch);
  if (check_batch(encoder, batch, expected, trained, problems))
    check_gradients(encoder, trained, problems);

  encoder.eval();
  {
    torch::NoGradGuard no_grad;
    const TextFeatures first = encoder.encode(batch);
    const TextFeatures second = encoder.encode(batch);
    if (check_batch(encoder, batch, expected, first, problems) &&
        !torch::equal(first.features, second.features))
      problems.push_back(
          "encoding the same batch twice in evaluation mode gave different features");
    const std::vector<std::string> empty(2);
    const TextFeatures none = encoder.encode(empty);
    check_batch(encoder, empty, {false, false}, none, problems);
  }
  encoder.train(was_training);
  return join(problems, "\n");
}

}  // namespace wscsl::testing
