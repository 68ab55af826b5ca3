// Text features computed outside wscsl (e.g. the HGLMM Fisher vectors Vasileva et al. released
// for Polyvore Outfits), looked up by exact text and mapped into φ's space by a trainable head.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/data/text_features.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::precomputed_text {

enum class Format { Hglmm, Npy };
enum class Head { Released, Linear, None };

struct PrecomputedTextOptions {
  std::string file;
  Format format = Format::Hglmm;
  std::int64_t dim = 6000;  // F of an HGLMM file
  std::string keys;         // the keys of an .npy file's rows
  Head head = Head::Released;
  std::int64_t output_dim = 0;  // E, from the backbone
};

class PrecomputedText final : public TextEncoder {
 public:
  using Options = PrecomputedTextOptions;
  static Schema<Options> schema();
  explicit PrecomputedText(const Options& options);

  std::int64_t output_dim() const override { return options_.output_dim; }
  // F, the size of the features in the file.
  std::int64_t feature_dim() const { return table_.dim(); }

 protected:
  TextFeatures encode_impl(const std::vector<std::string>& texts) override;

 private:
  static TextFeatureTable read_table(const Options& options);

  Options options_;
  TextFeatureTable table_;
  torch::nn::Sequential fc1_{nullptr};  // released: Linear(F, E), BatchNorm1d(E), ReLU
  torch::nn::Linear fc2_{nullptr};      // released: Linear(E, E)
  torch::nn::Linear fc_{nullptr};       // linear: Linear(F, E)
};

}  // namespace wscsl::precomputed_text
