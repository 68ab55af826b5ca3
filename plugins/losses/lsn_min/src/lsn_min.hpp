// LSN's training objective: the margin triplet loss under each of the K embeddings, minimised over
// the embeddings — per batch (DiscoverNet's reimplementation) or per triplet (the usual
// multiple-choice-learning form).
#pragma once

#include "wscsl/sdk.hpp"

namespace wscsl::lsn_min {

// Where the minimum over embeddings is taken: of the batch mean, or per triplet.
enum class Form { Batch, Triplet };

struct LsnMinOptions {
  double margin = 0.2;
  Form form = Form::Batch;
};

class LsnMinLoss final : public Loss {
 public:
  using Options = LsnMinOptions;
  static Schema<Options> schema();
  explicit LsnMinLoss(const Options& options) : options_(options) {}

 protected:
  std::map<std::string, torch::Tensor> compute_impl(const LossInput& input) override;

 private:
  Options options_;
};

}  // namespace wscsl::lsn_min
