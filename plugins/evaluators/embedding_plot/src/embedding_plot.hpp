// A 2-D projection (t-SNE or PCA) of each learned embedding ψ_k of the evaluated split's images,
// coloured by the values of the condition aligned to it (the papers' Fig. 5), written as a PNG.
#pragma once

#include <cstdint>
#include <string>

#include "projection.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::embedding_plot {

enum class Projection { Tsne, Pca };
const EnumChoices<Projection>& projection_choices();
// One panel per embedding coloured by its aligned condition, or a grid of embeddings × conditions.
enum class Panels { Aligned, All };

struct EmbeddingPlotOptions {
  Projection projection = Projection::Tsne;
  std::int64_t points = 500;
  std::int64_t seed = 0;
  double perplexity = 30.0;
  std::int64_t iterations = 1000;
  aligned::Strategy alignment = aligned::Strategy::Ot;
  Panels panels = Panels::Aligned;
  std::string file;
  std::int64_t panel_size = 240;
};

class EmbeddingPlot final : public Evaluator {
 public:
  using Options = EmbeddingPlotOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit EmbeddingPlot(const Options& options) : options_(options) {}
  bool runs_during_validation() const override { return false; }

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  std::string projection_title() const;
  torch::Tensor project(const torch::Tensor& x, const TsneOptions& tsne) const;
  Options options_;
};

}  // namespace wscsl::embedding_plot
