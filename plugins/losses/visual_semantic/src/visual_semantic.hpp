// The visual-semantic embedding loss of the type-aware network (Vasileva et al., ECCV 2018, §3.3;
// the released tripletnet.py: calc_vse_loss): each item's text should be nearer its own image's
// general embedding φ than the images of the triplet's two other items, by a margin. SCE-Net
// (Tan et al. 2019) trains its outfit models with it ("the same settings as Vasileva et al.").
#pragma once

#include <string>

#include "wscsl/sdk.hpp"

namespace wscsl::visual_semantic {

struct VisualSemanticOptions {
  std::string text;  // the text encoder, required
  double margin = 0.3;
};

class VisualSemantic final : public Loss {
 public:
  using Options = VisualSemanticOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit VisualSemantic(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::visual_semantic
