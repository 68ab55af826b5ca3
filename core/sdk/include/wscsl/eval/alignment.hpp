// Aligning learned embeddings with ground-truth conditions (DiscoverNet's GR/OT criterion).
// Plain double-precision code with no LibTorch dependency.
#pragma once

#include <cstddef>
#include <vector>

namespace wscsl::alignment {

// Row-major dense matrix.
struct Matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c, double fill = 0.0) : rows(r), cols(c), values(r * c, fill) {}
  double& operator()(std::size_t r, std::size_t c) { return values[r * cols + c]; }
  double operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
};

struct SinkhornResult {
  Matrix plan;                  // rows × cols, row sums ≈ a, column sums ≈ b
  int iterations = 0;           // iterations run
  double marginal_error = 0.0;  // ||plan^T 1 − b||₂ at the last check
  bool converged = false;       // marginal_error < tolerance
};

// Entropic optimal transport min <T, C> − reg·H(T) s.t. T1 = a, Tᵀ1 = b, computed in the log
// domain. It runs POT's ot.sinkhorn loop (v = b / Kᵀu, u = a / Kv, marginal check every 10th
// iteration from the first, stop when the error is below `tolerance`) on log-potentials, so it
// returns POT's plan wherever POT's plain solver works, and keeps its marginals where
// exp(−C/reg) underflows and POT returns zeros.
SinkhornResult sinkhorn_log(const Matrix& cost, const std::vector<double>& a,
                            const std::vector<double>& b, double reg, int max_iterations = 1000,
                            double tolerance = 1e-9);

// Minimum-cost one-to-one assignment (Hungarian / Kuhn-Munkres with potentials). For r ≤ c every
// row gets a distinct column; for r > c every column gets a distinct row and the remaining rows
// get -1. Returns the column of each row.
std::vector<int> optimal_assignment(const Matrix& cost);

// For each row, the column with the lowest cost (ties: the first). Not one-to-one.
std::vector<int> greedy_assignment(const Matrix& cost);

// Exact optimal transport with uniform marginals: the plan T ≥ 0 minimising <T, cost> subject to
// every row summing to 1/rows and every column to 1/cols (rectangular costs included). Exact, not
// entropic: with n = lcm(rows, cols), each row is replicated n/rows times and each column n/cols
// times, the optimal permutation of that n × n problem is found with optimal_assignment, and its
// n entries are summed back (each worth 1/n). The transport polytope scaled by n has integral
// vertices, so this is an optimal vertex; for a square cost it is the Hungarian permutation / rows.
// Throws std::invalid_argument when n exceeds 1024 (the n × n assignment would take too long).
Matrix exact_transport(const Matrix& cost);

// The plan of an assignment (one column per row, -1 = none): 1/rows at (r, assignment[r]).
Matrix assignment_plan(const std::vector<int>& assignment, std::size_t cols);

// For each row, the column holding the row's largest entry (ties: the first); -1 for a row
// without positive mass.
std::vector<int> row_argmax(const Matrix& plan);
// For each column, the row holding the column's largest entry (ties: the first); -1 for a column
// without positive mass.
std::vector<int> column_argmax(const Matrix& plan);

}  // namespace wscsl::alignment
