// The normalized-temperature (prototypical) loss of Pérez Rey, Holenderski and Jarnikov,
// "Content-Based Image Retrieval from Weakly-Supervised Disentangled Representations", Eq. 5–7:
// each group of images that share content has a prototype, the mean of its representations, and
// every image is pulled towards its own prototype and away from the others by a softmax over
// −d(h(x), z^(n))/τ with d the squared Euclidean distance (Eq. 9).
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::prototypical {

struct PrototypicalOptions {
  double temperature = 1.0;
};

class PrototypicalLoss final : public Loss {
 public:
  using Options = PrototypicalOptions;
  static Schema<Options> schema();
  explicit PrototypicalLoss(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::prototypical
