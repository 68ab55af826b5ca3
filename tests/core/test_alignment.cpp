#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

#include "wscsl/eval/alignment.hpp"

using namespace wscsl::alignment;

namespace {

struct PotCase {
  std::string name;
  double reg = 0;
  bool converged = false;
  Matrix cost, plan;
};

std::vector<PotCase> read_pot_cases() {
  std::ifstream in(WSCSL_TEST_DATA_DIR "/pot_sinkhorn.txt");
  std::vector<PotCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream header(line);
    PotCase c;
    std::size_t rows = 0, cols = 0;
    int converged = 0;
    header >> c.name >> rows >> cols >> c.reg >> converged;
    c.converged = converged != 0;
    c.cost = Matrix(rows, cols);
    c.plan = Matrix(rows, cols);
    for (Matrix* m : {&c.cost, &c.plan})
      for (std::size_t i = 0; i < rows; ++i) {
        std::getline(in, line);
        std::istringstream row(line);
        for (std::size_t j = 0; j < cols; ++j)
          row >> (*m)(i, j);
      }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<double> uniform(std::size_t n) {
  return std::vector<double>(n, 1.0 / n);
}

double assignment_cost(const Matrix& cost, const std::vector<int>& a) {
  double total = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] >= 0) total += cost(i, static_cast<std::size_t>(a[i]));
  return total;
}

// Minimum over every injective assignment of the smaller side, by enumeration.
double brute_force_cost(const Matrix& cost) {
  const bool transposed = cost.rows > cost.cols;
  const std::size_t n = transposed ? cost.cols : cost.rows, m = transposed ? cost.rows : cost.cols;
  std::vector<std::size_t> cols(m);
  std::iota(cols.begin(), cols.end(), 0);
  double best = 1e300;
  do {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i)
      total += transposed ? cost(cols[i], i) : cost(i, cols[i]);
    best = std::min(best, total);
  } while (std::next_permutation(cols.begin(), cols.end()));
  return best;
}

}  // namespace

TEST(Sinkhorn, AgreesWithPotWherePotsPlainSolverWorks) {
  const auto cases = read_pot_cases();
  ASSERT_EQ(cases.size(), 6u);
  for (const PotCase& c : cases) {
    if (c.name == "underflow_column") continue;
    const SinkhornResult r =
        sinkhorn_log(c.cost, uniform(c.cost.rows), uniform(c.cost.cols), c.reg);
    EXPECT_EQ(r.converged, c.converged) << c.name;
    for (std::size_t k = 0; k < c.plan.values.size(); ++k)
      EXPECT_NEAR(r.plan.values[k], c.plan.values[k], 1e-9) << c.name << " entry " << k;
  }
}

TEST(Sinkhorn, KeepsMarginalsWherePotUnderflows) {
  for (const PotCase& c : read_pot_cases()) {
    if (c.name != "underflow_column") continue;
    // POT's plain solver returns a plan whose third column is zero: its marginals are broken and
    // 1 − <C, T> would count the missing mass as correct predictions.
    double pot_mass = 0, pot_column = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      pot_column += c.plan(i, 2);
      for (std::size_t j = 0; j < 4; ++j)
        pot_mass += c.plan(i, j);
    }
    EXPECT_EQ(pot_column, 0.0);
    EXPECT_LT(pot_mass, 1e-60);
    // The log-domain solver keeps every row marginal exactly and the columns within POT's
    // iteration budget; its plan is the exact assignment.
    const SinkhornResult r = sinkhorn_log(c.cost, uniform(4), uniform(4), c.reg);
    const std::vector<int> exact = optimal_assignment(c.cost);
    for (std::size_t i = 0; i < 4; ++i) {
      double row = 0, col = 0;
      for (std::size_t j = 0; j < 4; ++j)
        row += r.plan(i, j), col += r.plan(j, i);
      EXPECT_NEAR(row, 0.25, 1e-12);
      EXPECT_NEAR(col, 0.25, 1e-3);
      EXPECT_NEAR(r.plan(i, static_cast<std::size_t>(exact[i])), 0.25, 1e-3);
    }
    // At reg 1e-3 Sinkhorn converges slowly here; more iterations keep shrinking the error.
    EXPECT_FALSE(r.converged);
    const SinkhornResult longer = sinkhorn_log(c.cost, uniform(4), uniform(4), c.reg, 20000);
    EXPECT_LT(longer.marginal_error, r.marginal_error / 10);
  }
}

TEST(Sinkhorn, ApproachesTheExactAssignmentAsRegularisationVanishes) {
  Matrix cost(4, 4);
  const double values[16] = {0.30, 0.10, 0.40, 0.45, 0.20, 0.35, 0.05, 0.50,
                             0.50, 0.40, 0.30, 0.15, 0.12, 0.44, 0.38, 0.29};
  cost.values.assign(values, values + 16);
  const std::vector<int> exact = optimal_assignment(cost);
  const SinkhornResult r = sinkhorn_log(cost, uniform(4), uniform(4), 1e-4, 20000, 1e-12);
  double ot_cost = 0;
  for (std::size_t k = 0; k < 16; ++k)
    ot_cost += r.plan.values[k] * cost.values[k];
  EXPECT_NEAR(ot_cost, assignment_cost(cost, exact) / 4.0, 1e-6);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(r.plan(i, static_cast<std::size_t>(exact[i])), 0.25, 1e-6);
}

TEST(Assignment, KnownOptimalMatching) {
  // The diagonal is cheapest per row, but the optimum is the anti-diagonal pairing.
  Matrix cost(3, 3);
  const double values[9] = {1, 2, 3, 2, 4, 6, 3, 6, 9};
  cost.values.assign(values, values + 9);
  const std::vector<int> a = optimal_assignment(cost);
  EXPECT_EQ(a, (std::vector<int>{2, 1, 0}));
  EXPECT_DOUBLE_EQ(assignment_cost(cost, a), 10.0);
  EXPECT_EQ(greedy_assignment(cost), (std::vector<int>{0, 0, 0}));
}

TEST(Assignment, MatchesBruteForceOnRandomSquareAndRectangularCosts) {
  std::uint64_t state = 7;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  for (auto [rows, cols] : {std::pair<int, int>{4, 4}, {3, 5}, {5, 3}, {6, 6}, {2, 6}}) {
    for (int trial = 0; trial < 20; ++trial) {
      Matrix cost(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
      for (double& v : cost.values)
        v = next();
      const std::vector<int> a = optimal_assignment(cost);
      std::vector<int> used;
      for (int c : a)
        if (c >= 0) used.push_back(c);
      std::sort(used.begin(), used.end());
      EXPECT_EQ(std::adjacent_find(used.begin(), used.end()), used.end()) << "not one-to-one";
      EXPECT_EQ(used.size(), static_cast<std::size_t>(std::min(rows, cols)));
      EXPECT_NEAR(assignment_cost(cost, a), brute_force_cost(cost), 1e-12);
    }
  }
}

namespace {

// The optimal cost of transport with uniform marginals by enumerating the vertices of the
// transport polytope: every basic solution is supported on a spanning tree of the bipartite graph
// rows + cols (rows + cols − 1 edges); its flows follow by peeling leaves. The cheapest feasible
// one is the optimum.
double brute_force_transport(const Matrix& cost) {
  const std::size_t r = cost.rows, c = cost.cols, nodes = r + c, edges = r * c;
  const std::size_t tree = nodes - 1;
  double best = 1e300;
  std::vector<bool> pick(edges, false);
  std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(tree), true);
  do {
    std::vector<std::pair<std::size_t, std::size_t>> chosen;
    for (std::size_t e = 0; e < edges; ++e)
      if (pick[e]) chosen.push_back({e / c, r + e % c});
    // Peel leaves: a leaf node's remaining supply fixes the flow on its only edge.
    std::vector<double> supply(nodes);
    for (std::size_t i = 0; i < r; ++i)
      supply[i] = 1.0 / static_cast<double>(r);
    for (std::size_t j = 0; j < c; ++j)
      supply[r + j] = 1.0 / static_cast<double>(c);
    std::vector<bool> used(chosen.size(), false);
    bool feasible = true;
    double total = 0;
    for (std::size_t step = 0; step < chosen.size() && feasible; ++step) {
      std::vector<int> degree(nodes, 0);
      for (std::size_t e = 0; e < chosen.size(); ++e)
        if (!used[e]) ++degree[chosen[e].first], ++degree[chosen[e].second];
      std::size_t leaf_edge = chosen.size();
      std::size_t leaf = 0;
      for (std::size_t e = 0; e < chosen.size() && leaf_edge == chosen.size(); ++e) {
        if (used[e]) continue;
        if (degree[chosen[e].first] == 1)
          leaf_edge = e, leaf = chosen[e].first;
        else if (degree[chosen[e].second] == 1)
          leaf_edge = e, leaf = chosen[e].second;
      }
      if (leaf_edge == chosen.size()) {
        feasible = false;  // a cycle: not a tree
        break;
      }
      const std::size_t other =
          leaf == chosen[leaf_edge].first ? chosen[leaf_edge].second : chosen[leaf_edge].first;
      const double flow = supply[leaf];
      supply[leaf] = 0;
      supply[other] -= flow;
      if (supply[other] < -1e-12) feasible = false;
      used[leaf_edge] = true;
      total += flow * cost(chosen[leaf_edge].first, chosen[leaf_edge].second - r);
    }
    if (feasible) best = std::min(best, total);
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return best;
}

double plan_cost(const Matrix& plan, const Matrix& cost) {
  double total = 0;
  for (std::size_t k = 0; k < plan.values.size(); ++k)
    total += plan.values[k] * cost.values[k];
  return total;
}

void expect_uniform_marginals(const Matrix& plan) {
  for (std::size_t i = 0; i < plan.rows; ++i) {
    double row = 0;
    for (std::size_t j = 0; j < plan.cols; ++j)
      row += plan(i, j);
    EXPECT_NEAR(row, 1.0 / plan.rows, 1e-12);
  }
  for (std::size_t j = 0; j < plan.cols; ++j) {
    double col = 0;
    for (std::size_t i = 0; i < plan.rows; ++i)
      col += plan(i, j);
    EXPECT_NEAR(col, 1.0 / plan.cols, 1e-12);
  }
}

}  // namespace

TEST(ExactTransport, KnownRectangularPlan) {
  // Three rows (mass 1/3), five columns (1/5); in units of 1/15 a row sends 5 and a column takes
  // 3. Row 0 is free on columns 0-1, row 1 on 2-3, row 2 on column 4 only (cost 1 elsewhere):
  // row 2 must send 2 units elsewhere, into the one spare unit of {0, 1} and of {2, 3}.
  Matrix cost(3, 5, 1.0);
  cost(0, 0) = cost(0, 1) = cost(1, 2) = cost(1, 3) = cost(2, 4) = 0.0;
  const Matrix plan = exact_transport(cost);
  expect_uniform_marginals(plan);
  EXPECT_NEAR(plan_cost(plan, cost), 2.0 / 15.0, 1e-12);
  EXPECT_NEAR(plan(2, 4), 3.0 / 15.0, 1e-12);
  EXPECT_EQ(row_argmax(plan)[2], 4);
  EXPECT_EQ(column_argmax(plan), (std::vector<int>{0, 0, 1, 1, 2}));
}

TEST(ExactTransport, MatchesVertexEnumerationOnRandomCosts) {
  std::uint64_t state = 11;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  for (auto [rows, cols] : {std::pair<int, int>{3, 5}, {5, 3}, {2, 4}, {2, 6}, {4, 4}}) {
    for (int trial = 0; trial < 5; ++trial) {
      Matrix cost(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
      for (double& v : cost.values)
        v = next();
      const Matrix plan = exact_transport(cost);
      expect_uniform_marginals(plan);
      EXPECT_NEAR(plan_cost(plan, cost), brute_force_transport(cost), 1e-12)
          << rows << "x" << cols << " trial " << trial;
    }
  }
}

TEST(ExactTransport, IsTheHungarianPermutationForSquareCosts) {
  Matrix cost(3, 3);
  const double values[9] = {1, 2, 3, 2, 4, 6, 3, 6, 9};
  cost.values.assign(values, values + 9);
  const Matrix plan = exact_transport(cost);
  const std::vector<int> a = optimal_assignment(cost);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(plan(i, static_cast<std::size_t>(a[i])), 1.0 / 3.0);
  EXPECT_EQ(row_argmax(plan), a);
}

TEST(ExactTransport, IsTheLimitOfSinkhornOnRectangularCosts) {
  const auto cases = read_pot_cases();
  for (const PotCase& c : cases) {
    if (c.cost.rows == c.cost.cols) continue;  // rect3x5 and rect5x3
    const Matrix exact = exact_transport(c.cost);
    const SinkhornResult r =
        sinkhorn_log(c.cost, uniform(c.cost.rows), uniform(c.cost.cols), 1e-4, 50000, 1e-12);
    EXPECT_NEAR(plan_cost(r.plan, c.cost), plan_cost(exact, c.cost), 1e-6) << c.name;
    for (std::size_t k = 0; k < exact.values.size(); ++k)
      EXPECT_NEAR(r.plan.values[k], exact.values[k], 1e-5) << c.name << " entry " << k;
  }
}

TEST(ExactTransport, RefusesSizesWhoseAssignmentWouldBeTooLarge) {
  EXPECT_THROW(exact_transport(Matrix(31, 37)), std::invalid_argument);
  EXPECT_THROW(exact_transport(Matrix(0, 3)), std::invalid_argument);
}
