// The margin (hinge) triplet loss on the module's fused distances:
//   L = mean_i max(0, margin − (d_far,i − d_close,i)).
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::margin {

struct MarginOptions {
  double margin = 0.2;
};

class MarginLoss final : public Loss {
 public:
  using Options = MarginOptions;
  static Schema<Options> schema();
  explicit MarginLoss(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::margin
