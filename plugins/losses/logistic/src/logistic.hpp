// The logistic triplet loss of DiscoverNet's probabilistic view (supplementary §2, Eq. 5):
// ℓ(x) = log(1 + exp(−x)) applied to Diff − γ, with Diff = d_far − d_close.
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::logistic {

// Where the expectation over embeddings is taken: ℓ(E[Diff] − γ) (Eq. 6) or E[ℓ(Diff_k − γ)] (Eq.
// 5).
enum class Expectation { Distance, Loss };

struct LogisticOptions {
  double margin = 0.2;
  Expectation expectation = Expectation::Distance;
};

class LogisticLoss final : public Loss {
 public:
  using Options = LogisticOptions;
  static Schema<Options> schema();
  explicit LogisticLoss(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::logistic
