#include "wscsl/eval/alignment.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace wscsl::alignment {
namespace {

void check_inputs(const Matrix& cost, const std::vector<double>& a, const std::vector<double>& b,
                  double reg) {
  if (cost.rows == 0 || cost.cols == 0) throw std::invalid_argument("empty cost matrix");
  if (a.size() != cost.rows || b.size() != cost.cols)
    throw std::invalid_argument("marginals do not match the cost matrix");
  if (!(reg > 0)) throw std::invalid_argument("the regularisation must be positive");
}

double log_sum_exp(const double* x, std::size_t n, std::size_t stride) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i)
    m = std::max(m, x[i * stride]);
  if (std::isinf(m)) return m;
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    s += std::exp(x[i * stride] - m);
  return m + std::log(s);
}

double column_error(const Matrix& plan, const std::vector<double>& b) {
  double err = 0.0;
  for (std::size_t j = 0; j < plan.cols; ++j) {
    double s = 0.0;
    for (std::size_t i = 0; i < plan.rows; ++i)
      s += plan(i, j);
    err += (s - b[j]) * (s - b[j]);
  }
  return std::sqrt(err);
}

}  // namespace

SinkhornResult sinkhorn_log(const Matrix& cost, const std::vector<double>& a,
                            const std::vector<double>& b, double reg, int max_iterations,
                            double tolerance) {
  check_inputs(cost, a, b, reg);
  const std::size_t n = cost.rows, m = cost.cols;
  std::vector<double> log_u(n, -std::log(static_cast<double>(n)));
  std::vector<double> log_v(m, -std::log(static_cast<double>(m)));
  std::vector<double> work(std::max(n, m));
  Matrix log_kernel(n, m);
  for (std::size_t k = 0; k < n * m; ++k)
    log_kernel.values[k] = -cost.values[k] / reg;
  auto plan_of = [&] {
    Matrix plan(n, m);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j)
        plan(i, j) = std::exp(log_u[i] + log_kernel(i, j) + log_v[j]);
    return plan;
  };
  SinkhornResult result;
  result.marginal_error = std::numeric_limits<double>::infinity();
  for (int it = 0; it < max_iterations; ++it) {
    for (std::size_t j = 0; j < m; ++j) {
      for (std::size_t i = 0; i < n; ++i)
        work[i] = log_u[i] + log_kernel(i, j);
      log_v[j] = std::log(b[j]) - log_sum_exp(work.data(), n, 1);
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j)
        work[j] = log_kernel(i, j) + log_v[j];
      log_u[i] = std::log(a[i]) - log_sum_exp(work.data(), m, 1);
    }
    result.iterations = it + 1;
    if (it % 10 == 0) {
      result.marginal_error = column_error(plan_of(), b);
      if (result.marginal_error < tolerance) break;
    }
  }
  result.plan = plan_of();
  result.converged = result.marginal_error < tolerance;
  return result;
}

std::vector<int> optimal_assignment(const Matrix& cost) {
  const bool transposed = cost.rows > cost.cols;
  const std::size_t n = transposed ? cost.cols : cost.rows;  // n ≤ m
  const std::size_t m = transposed ? cost.rows : cost.cols;
  auto c = [&](std::size_t i, std::size_t j) { return transposed ? cost(j, i) : cost(i, j); };
  const double inf = std::numeric_limits<double>::infinity();
  // Shortest augmenting paths with potentials, 1-based with a virtual column 0.
  std::vector<double> u(n + 1, 0.0), v(m + 1, 0.0);
  std::vector<std::size_t> row_of_col(m + 1, 0), way(m + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    row_of_col[0] = i;
    std::size_t j0 = 0;
    std::vector<double> min_to(m + 1, inf);
    std::vector<bool> used(m + 1, false);
    do {
      used[j0] = true;
      const std::size_t i0 = row_of_col[j0];
      double delta = inf;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        const double reduced = c(i0 - 1, j - 1) - u[i0] - v[j];
        if (reduced < min_to[j]) min_to[j] = reduced, way[j] = j0;
        if (min_to[j] < delta) delta = min_to[j], j1 = j;
      }
      for (std::size_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[row_of_col[j]] += delta;
          v[j] -= delta;
        } else {
          min_to[j] -= delta;
        }
      }
      j0 = j1;
    } while (row_of_col[j0] != 0);
    do {
      const std::size_t j1 = way[j0];
      row_of_col[j0] = row_of_col[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> assignment(cost.rows, -1);
  for (std::size_t j = 1; j <= m; ++j) {
    if (row_of_col[j] == 0) continue;
    const std::size_t i = row_of_col[j] - 1;
    if (transposed)
      assignment[j - 1] = static_cast<int>(i);
    else
      assignment[i] = static_cast<int>(j - 1);
  }
  return assignment;
}

std::vector<int> greedy_assignment(const Matrix& cost) {
  std::vector<int> assignment(cost.rows, -1);
  for (std::size_t i = 0; i < cost.rows; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < cost.cols; ++j)
      if (cost(i, j) < cost(i, best)) best = j;
    assignment[i] = cost.cols ? static_cast<int>(best) : -1;
  }
  return assignment;
}

Matrix exact_transport(const Matrix& cost) {
  if (cost.rows == 0 || cost.cols == 0) throw std::invalid_argument("empty cost matrix");
  const std::size_t n = std::lcm(cost.rows, cost.cols);
  if (n > 1024)
    throw std::invalid_argument("exact transport of a " + std::to_string(cost.rows) + "x" +
                                std::to_string(cost.cols) + " cost needs a " + std::to_string(n) +
                                "x" + std::to_string(n) + " assignment; at most 1024 is supported");
  const std::size_t row_copies = n / cost.rows, col_copies = n / cost.cols;
  Matrix replicated(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      replicated(i, j) = cost(i / row_copies, j / col_copies);
  const std::vector<int> permutation = optimal_assignment(replicated);
  Matrix plan(cost.rows, cost.cols);
  for (std::size_t i = 0; i < n; ++i)
    plan(i / row_copies, static_cast<std::size_t>(permutation[i]) / col_copies) +=
        1.0 / static_cast<double>(n);
  return plan;
}

Matrix assignment_plan(const std::vector<int>& assignment, std::size_t cols) {
  Matrix plan(assignment.size(), cols);
  for (std::size_t i = 0; i < assignment.size(); ++i)
    if (assignment[i] >= 0)
      plan(i, static_cast<std::size_t>(assignment[i])) = 1.0 / static_cast<double>(plan.rows);
  return plan;
}

std::vector<int> row_argmax(const Matrix& plan) {
  std::vector<int> best(plan.rows, -1);
  for (std::size_t i = 0; i < plan.rows; ++i) {
    double largest = 0.0;
    for (std::size_t j = 0; j < plan.cols; ++j)
      if (plan(i, j) > largest) largest = plan(i, j), best[i] = static_cast<int>(j);
  }
  return best;
}

std::vector<int> column_argmax(const Matrix& plan) {
  std::vector<int> best(plan.cols, -1);
  for (std::size_t j = 0; j < plan.cols; ++j) {
    double largest = 0.0;
    for (std::size_t i = 0; i < plan.rows; ++i)
      if (plan(i, j) > largest) largest = plan(i, j), best[j] = static_cast<int>(i);
  }
  return best;
}

}  // namespace wscsl::alignment
