#include "projection.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "wscsl/error.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl::embedding_plot {
namespace {

using Points = std::vector<double>;  // row-major N × dim

Points to_points(const torch::Tensor& x) {
  const torch::Tensor c = x.to(torch::kDouble).contiguous();
  return Points(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// Conditional affinities p_{j|i} of row i at the bandwidth that gives entropy log(perplexity).
void conditional_row(const Points& d2, std::size_t n, std::size_t i, double log_perplexity,
                     double* out) {
  double lowest = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < n; ++j)
    if (j != i) lowest = std::min(lowest, d2[i * n + j]);
  double beta = 1.0, lo = 0.0, hi = std::numeric_limits<double>::infinity();
  for (int step = 0; step < 100; ++step) {
    double sum = 0.0, weighted = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      // Shifting by the nearest distance leaves the normalised row unchanged and avoids underflow.
      const double shifted = d2[i * n + j] - lowest;
      out[j] = j == i ? 0.0 : std::exp(-shifted * beta);
      sum += out[j];
      weighted += shifted * out[j];
    }
    const double entropy = std::log(sum) + beta * weighted / sum;
    for (std::size_t j = 0; j < n; ++j)
      out[j] /= sum;
    const double error = entropy - log_perplexity;
    if (std::abs(error) < 1e-5) break;
    if (error > 0) {  // too flat: narrow the kernel
      lo = beta;
      beta = std::isinf(hi) ? beta * 2.0 : (beta + hi) / 2.0;
    } else {
      hi = beta;
      beta = (beta + lo) / 2.0;
    }
  }
}

// Joint affinities P = (P_cond + P_condᵀ) / 2N, floored at 1e-12.
Points joint_affinities(const Points& x, std::size_t n, std::size_t dim, double perplexity) {
  Points d2(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double s = 0.0;
      for (std::size_t k = 0; k < dim; ++k) {
        const double diff = x[i * dim + k] - x[j * dim + k];
        s += diff * diff;
      }
      d2[i * n + j] = d2[j * n + i] = s;
    }
  Points conditional(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    conditional_row(d2, n, i, std::log(perplexity), &conditional[i * n]);
  Points p(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      p[i * n + j] = std::max((conditional[i * n + j] + conditional[j * n + i]) / (2.0 * n), 1e-12);
  return p;
}

}  // namespace

torch::Tensor pca_2d(const torch::Tensor& x) {
  if (x.dim() != 2 || x.size(0) < 1) throw Error("pca_2d expects a non-empty [N, D] matrix");
  const torch::Tensor centred = x.to(torch::kDouble) - x.to(torch::kDouble).mean(0, true);
  const torch::Tensor covariance = centred.t().mm(centred);
  const auto [values, vectors] = at::linalg_eigh(covariance);  // ascending eigenvalues
  const std::int64_t d = x.size(1);
  torch::Tensor out = torch::zeros({x.size(0), 2}, centred.options());
  for (std::int64_t axis = 0; axis < std::min<std::int64_t>(2, d); ++axis) {
    torch::Tensor direction = vectors.select(1, d - 1 - axis);
    const std::int64_t largest = direction.abs().argmax().item<std::int64_t>();
    if (direction[largest].item<double>() < 0) direction = -direction;
    out.select(1, axis).copy_(centred.mv(direction));
  }
  return out;
}

torch::Tensor tsne_2d(const torch::Tensor& x, const TsneOptions& o) {
  if (x.dim() != 2 || x.size(0) < 2) throw Error("tsne_2d expects an [N, D] matrix with N >= 2");
  const std::size_t n = static_cast<std::size_t>(x.size(0));
  const std::size_t dim = static_cast<std::size_t>(x.size(1));
  const double perplexity = std::max(1.0, std::min(o.perplexity, static_cast<double>(n - 1) / 3.0));
  const Points p = joint_affinities(to_points(x), n, dim, perplexity);

  Points y(n * 2), update(n * 2, 0.0), gains(n * 2, 1.0), gradient(n * 2);
  Rng rng(o.seed);
  for (std::size_t i = 0; i < n * 2; i += 2) {  // Box-Muller: two normals per draw
    const double radius = std::sqrt(-2.0 * std::log(1.0 - rng.uniform()));
    const double angle = 2.0 * M_PI * rng.uniform();
    y[i] = 1e-4 * radius * std::cos(angle);
    y[i + 1] = 1e-4 * radius * std::sin(angle);
  }
  const double learning_rate =
      o.learning_rate > 0 ? o.learning_rate
                          : std::max(static_cast<double>(n) / o.early_exaggeration / 4.0, 50.0);
  Points student(n * n);
  for (std::int64_t it = 0; it < o.iterations; ++it) {
    const bool early = it < o.exaggeration_iterations;
    const double exaggeration = early ? o.early_exaggeration : 1.0;
    const double momentum = early ? 0.5 : 0.8;
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        const double dx = y[2 * i] - y[2 * j], dy = y[2 * i + 1] - y[2 * j + 1];
        const double s = 1.0 / (1.0 + dx * dx + dy * dy);
        student[i * n + j] = student[j * n + i] = s;
        total += 2.0 * s;
      }
    std::fill(gradient.begin(), gradient.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        const double s = student[i * n + j];
        const double q = std::max(s / total, 1e-12);
        const double force = 4.0 * (exaggeration * p[i * n + j] - q) * s;
        const double fx = force * (y[2 * i] - y[2 * j]), fy = force * (y[2 * i + 1] - y[2 * j + 1]);
        gradient[2 * i] += fx;
        gradient[2 * i + 1] += fy;
        gradient[2 * j] -= fx;
        gradient[2 * j + 1] -= fy;
      }
    double mean_x = 0.0, mean_y = 0.0;
    for (std::size_t k = 0; k < n * 2; ++k) {
      const bool same_sign = (gradient[k] > 0) == (update[k] > 0);
      gains[k] = std::max(0.01, same_sign ? gains[k] * 0.8 : gains[k] + 0.2);
      update[k] = momentum * update[k] - learning_rate * gains[k] * gradient[k];
      y[k] += update[k];
      (k % 2 ? mean_y : mean_x) += y[k] / static_cast<double>(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
      y[2 * i] -= mean_x;
      y[2 * i + 1] -= mean_y;
    }
  }
  return torch::tensor(y, torch::kDouble).reshape({static_cast<std::int64_t>(n), 2});
}

}  // namespace wscsl::embedding_plot
