// The similarity loss L_sim of the type-aware network (Vasileva et al., ECCV 2018, §3.3): two hinge
// terms on a triplet whose close and far items share a type (as outfit triplets do), each
// comparing d(close, far) with one item's distance to the anchor; on the general image
// embeddings φ (the image part, `loss_sim_i`) or on a text encoder's features (the text part,
// `loss_sim_t`). For images the released code (tripletnet.py) and the paper's wording disagree on
// the sign; both are here. The text part is the released text term, which has the paper's sign.
#pragma once

#include <optional>
#include <string>

#include "wscsl/sdk.hpp"

namespace wscsl::type_similarity {

enum class Input {
  Image,  // φ of every triplet
  Text,   // a text encoder's features, triplets without all three texts left out
};

enum class Sign {
  Released,  // max(0, d(f, a) − d(f, c) + m) and max(0, d(c, a) − d(c, f) + m): close and far apart
  Paper,  // max(0, d(f, c) − d(f, a) + m) and max(0, d(f, c) − d(c, a) + m): close and far together
};

struct TypeSimilarityOptions {
  double margin = 0.3;
  Input input = Input::Image;
  Sign sign = Sign::Released;       // read with input = image
  std::optional<std::string> text;  // the text encoder; required with input = text
};

class TypeSimilarity final : public Loss {
 public:
  using Options = TypeSimilarityOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit TypeSimilarity(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::type_similarity
