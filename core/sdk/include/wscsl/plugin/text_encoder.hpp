// Text encoder: the text of each item (one of a dataset's text fields, e.g. an item's title) →
// one feature vector per item in φ's space, for the condition modules and losses that read text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"

namespace wscsl {

// The text features of a batch of items. An item without text (an empty string, or text the
// encoder cannot read, e.g. a title absent from a precomputed feature file) has zero features
// and `present` false: the released rule, under which text losses leave it out.
struct TextFeatures {
  torch::Tensor features;  // [B, E] float, zero where !present
  torch::Tensor present;   // [B] bool

  TextFeatures index_select(const torch::Tensor& rows) const;
  TextFeatures to(torch::Device device) const;
};

class TextEncoder : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::TextEncoder;
  ~TextEncoder() override;
  Kind kind() const noexcept final { return Kind::TextEncoder; }

  // One text per item → features [B, output_dim()] on the encoder's device, gradients flowing
  // into its parameters. Empty texts are absent; the rows of absent items are zeroed here, so an
  // implementation need not.
  TextFeatures encode(const std::vector<std::string>& texts);
  // E. The host requires it to equal the backbone's embedding size: text lives in φ's space.
  virtual std::int64_t output_dim() const = 0;

 protected:
  // `present` may be left undefined: then every non-empty text is present.
  virtual TextFeatures encode_impl(const std::vector<std::string>& texts) = 0;
};

}  // namespace wscsl
