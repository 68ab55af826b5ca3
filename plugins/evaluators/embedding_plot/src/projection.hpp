// Two-dimensional projections of embeddings for plots: PCA and exact t-SNE.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace wscsl::embedding_plot {

// The rows of x [N, D] (centred) on their two leading principal axes → float64 [N, 2]. Each axis
// is signed so that its largest-magnitude loading is positive (a deterministic orientation); with
// D = 1 the second coordinate is 0.
torch::Tensor pca_2d(const torch::Tensor& x);

struct TsneOptions {
  double perplexity = 30.0;  // lowered to (N − 1) / 3 for small N
  std::int64_t iterations = 1000;
  double learning_rate = 0.0;  // 0: max(N / early_exaggeration / 4, 50), scikit-learn's "auto"
  double early_exaggeration = 12.0;
  std::int64_t exaggeration_iterations = 250;  // also when momentum rises from 0.5 to 0.8
  std::uint64_t seed = 0;
};

// Exact t-SNE (van der Maaten & Hinton, 2008) of the rows of x [N, D] → float64 [N, 2]:
// Gaussian affinities with a per-point bandwidth found by bisection to the perplexity,
// symmetrised; Student-t similarities in 2-D; gradient descent with momentum, per-coordinate
// gains and early exaggeration, as in the reference implementation. O(N²) time and memory per
// iteration, so plots use a subsample. The initial layout is N(0, 10⁻⁴) drawn from `seed`:
// the same inputs and seed give the same output.
torch::Tensor tsne_2d(const torch::Tensor& x, const TsneOptions& options);

}  // namespace wscsl::embedding_plot
