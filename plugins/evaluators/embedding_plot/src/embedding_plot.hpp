// A 2-D projection (t-SNE or PCA) of each learned embedding ψ_k of the evaluated split's images,
// coloured by the values of the condition aligned to it (the papers' Fig. 5), written as a PNG.
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/sdk.hpp"

namespace wscsl::embedding_plot {

struct EmbeddingPlotOptions {
  std::string projection = "tsne";
  std::int64_t points = 500;
  std::int64_t seed = 0;
  double perplexity = 30.0;
  std::int64_t iterations = 1000;
  std::string alignment = "ot";
  std::string panels = "aligned";
  std::string file;
  std::int64_t panel_size = 240;
};

class EmbeddingPlot final : public Evaluator {
 public:
  using Options = EmbeddingPlotOptions;
  static Schema<Options> schema();
  explicit EmbeddingPlot(const Options& options) : options_(options) {}
  bool runs_during_validation() const override { return false; }

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::embedding_plot
