// The image part of the type-aware network's similarity loss L_sim (Vasileva et al., ECCV 2018,
// §3.3): two hinge terms on the general embeddings φ of a triplet whose close and far items share
// a type (as outfit triplets do), each comparing d(close, far) with one item's distance to the
// anchor. The released code (tripletnet.py: loss_sim_i) and the paper's wording disagree on the
// sign; both are here.
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::type_similarity {

enum class Sign {
  Released,  // max(0, d(f, a) − d(f, c) + m) and max(0, d(c, a) − d(c, f) + m): close and far apart
  Paper,  // max(0, d(f, c) − d(f, a) + m) and max(0, d(f, c) − d(c, a) + m): close and far together
};

struct TypeSimilarityOptions {
  double margin = 0.3;
  Sign sign = Sign::Released;
};

class TypeSimilarity final : public Loss {
 public:
  using Options = TypeSimilarityOptions;
  static Schema<Options> schema();
  explicit TypeSimilarity(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::type_similarity
