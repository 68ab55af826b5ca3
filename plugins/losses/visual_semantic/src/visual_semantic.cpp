#include "visual_semantic.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/hinge.hpp"

namespace wscsl::visual_semantic {

Schema<VisualSemanticOptions> VisualSemantic::schema() {
  using O = VisualSemanticOptions;
  Schema<O> s(
      "The type-aware network's visual-semantic embedding loss (Vasileva et al. 2018): for each "
      "triplet member with text t, max(0, d(φ_x, t) − d(φ_y, t) + μ) for the two other members "
      "y, over the members with text; averaged over the two and over the three members.");
  s.field("text", &O::text,
          "The name of the text encoder ([[text_encoders]] name) whose features are the items' "
          "texts.")
      .required();
  s.field("margin", &O::margin, "μ of the hinges (the released --margin, 0.3).").min(0.0);
  return s;
}

Contract VisualSemantic::contract_of(const Options& options) {
  Contract c;
  c.needs.push_back({Resource::TextFeatures, options.text});
  return c;
}

std::map<std::string, torch::Tensor> VisualSemantic::compute_impl(const LossInput& input) {
  const ComparedItems in = gather(input.items, input.comparisons);
  const torch::Tensor &phi_anchor = in.first.phi, &phi_close = in.second.phi,
                      &phi_far = in.third.phi;
  const TextFeatures &text_anchor = in.first.texts.at(options_.text),
                     &text_close = in.second.texts.at(options_.text),
                     &text_far = in.third.texts.at(options_.text);
  const double m = options_.margin;
  // One member's text against its own image and the two others', image first as released.
  const auto member = [m](const TextFeatures& text, const torch::Tensor& own,
                          const torch::Tensor& other, const torch::Tensor& another) {
    const torch::Tensor matched = nn::pairwise_distance(own, text.features);
    return (nn::masked_hinge_mean(matched, nn::pairwise_distance(other, text.features), m,
                                  text.present) +
            nn::masked_hinge_mean(matched, nn::pairwise_distance(another, text.features), m,
                                  text.present)) /
           2.0;
  };
  const torch::Tensor loss = (member(text_anchor, phi_anchor, phi_far, phi_close) +
                              member(text_far, phi_far, phi_anchor, phi_close) +
                              member(text_close, phi_close, phi_anchor, phi_far)) /
                             3.0;
  return {{"visual_semantic", loss}};
}

}  // namespace wscsl::visual_semantic

WSCSL_PLUGIN(visual_semantic, "0.1.0",
             "The type-aware network's visual-semantic embedding loss (images against texts)") {
  registrar.add<wscsl::Loss, wscsl::visual_semantic::VisualSemantic>("visual_semantic");
}
