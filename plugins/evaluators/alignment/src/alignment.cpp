#include "alignment.hpp"

#include <fmt/format.h>

#include "wscsl/eval/alignment.hpp"
#include "wscsl/eval/triplet_math.hpp"

namespace wscsl::alignment_eval {
namespace {

using wscsl::alignment::Matrix;

// A[c, l]: accuracy of embedding l on the triplets of condition c.
Matrix accuracy_matrix(EvalContext& context, const EmbeddingTable& table) {
  if (!table.conditions.defined())
    throw Error(
        fmt::format("alignment: split '{}' has no triplet conditions; the criterion needs "
                    "them",
                    table.split));
  auto [close, far] = embedding_distances(context.module, table, context.batch_size);
  const auto names = context.info.condition_names();
  const auto c = static_cast<std::int64_t>(names.size());
  const ConditionAccuracy by =
      accuracy_by_condition(triplet_correctness(close, far), table.conditions, c);
  Matrix a(static_cast<std::size_t>(c), static_cast<std::size_t>(close.size(1)));
  for (std::int64_t i = 0; i < c; ++i) {
    if (by.counts[i].item<std::int64_t>() == 0)
      throw Error(fmt::format("alignment: split '{}' has no triplets of condition '{}'",
                              table.split, names[static_cast<std::size_t>(i)]));
    for (std::size_t j = 0; j < a.cols; ++j)
      a(static_cast<std::size_t>(i), j) =
          by.accuracy[i][static_cast<std::int64_t>(j)].item<double>();
  }
  return a;
}

Matrix one_minus(const Matrix& m) {
  Matrix out = m;
  for (double& v : out.values)
    v = 1.0 - v;
  return out;
}

std::string psi_name(int l) {
  return l < 0 ? "-" : fmt::format("ψ{}", l + 1);
}

}  // namespace

Schema<AlignmentOptions> Alignment::schema() {
  using O = AlignmentOptions;
  Schema<O> s(
      "GR/OT alignment accuracy (DiscoverNet §4.2): cost C = 1 − A with A[c,l] the accuracy of "
      "embedding l on condition c's triplets; greedy, entropic-OT and exact assignments fitted on "
      "the validation split and applied to the evaluated split.");
  s.field("reg", &O::reg, "Entropic regularisation of the Sinkhorn plan (reference: 1e-3).")
      .greater_than(0.0);
  s.field("max_iterations", &O::max_iterations, "Sinkhorn iterations at most (POT: 1000).").min(1);
  s.field("tolerance", &O::tolerance, "Sinkhorn stops when the marginal error is below this.")
      .greater_than(0.0);
  s.field("greedy_fit", &O::greedy_fit,
          "Split the greedy choice is made on: \"target\" (the reference code picks the best "
          "embedding per condition on the evaluated split itself) or \"fit\" (the validation "
          "split, like OT).")
      .choices({"target", "fit"});
  return s;
}

EvalReport Alignment::evaluate_impl(EvalContext& context) {
  const Matrix a_fit = accuracy_matrix(context, context.fit);
  const Matrix a_target =
      &context.fit == &context.target ? a_fit : accuracy_matrix(context, context.target);
  const Matrix cost_fit = one_minus(a_fit), cost_target = one_minus(a_target);
  const std::size_t conditions = a_fit.rows, embeddings = a_fit.cols;
  const auto names = context.info.condition_names();

  const std::vector<int> greedy =
      alignment::greedy_assignment(options_.greedy_fit == "fit" ? cost_fit : cost_target);
  const std::vector<int> exact = alignment::optimal_assignment(cost_fit);
  const std::vector<double> a(conditions, 1.0 / static_cast<double>(conditions));
  const std::vector<double> b(embeddings, 1.0 / static_cast<double>(embeddings));
  const alignment::SinkhornResult ot = alignment::sinkhorn_log(
      cost_fit, a, b, options_.reg, static_cast<int>(options_.max_iterations), options_.tolerance);

  double gr_total = 0, exact_total = 0, ot_total = 0;
  std::vector<double> ot_per(conditions), gr_per(conditions), exact_per(conditions);
  std::vector<int> ot_match(conditions);
  torch::Tensor ot_assignment = torch::empty({static_cast<std::int64_t>(conditions)}, torch::kLong);
  torch::Tensor exact_assignment = torch::empty_like(ot_assignment);
  for (std::size_t c = 0; c < conditions; ++c) {
    gr_per[c] = a_target(c, static_cast<std::size_t>(greedy[c]));
    // A condition left without an embedding (more conditions than embeddings) is at chance.
    exact_per[c] = exact[c] < 0 ? 0.5 : a_target(c, static_cast<std::size_t>(exact[c]));
    double row_mass = 0, row_cost = 0;
    std::size_t best = 0;
    for (std::size_t l = 0; l < embeddings; ++l) {
      row_mass += ot.plan(c, l);
      row_cost += ot.plan(c, l) * cost_target(c, l);
      if (ot.plan(c, l) > ot.plan(c, best)) best = l;
    }
    ot_per[c] = 1.0 - row_cost / row_mass;
    ot_match[c] = static_cast<int>(best);
    ot_total += row_cost;
    gr_total += gr_per[c];
    exact_total += exact_per[c];
    ot_assignment[static_cast<std::int64_t>(c)] = static_cast<std::int64_t>(best);
    exact_assignment[static_cast<std::int64_t>(c)] = static_cast<std::int64_t>(exact[c]);
  }
  const double n = static_cast<double>(conditions);
  EvalReport report;
  report.metrics = {{"gr_accuracy", gr_total / n},
                    {"ot_accuracy", 1.0 - ot_total},
                    {"exact_accuracy", exact_total / n},
                    {"ot_converged", ot.converged ? 1.0 : 0.0}};
  for (std::size_t c = 0; c < conditions; ++c)
    report.metrics.push_back({"ot_accuracy/" + names[c], ot_per[c]});
  context.shared["alignment.ot_assignment"] = ot_assignment;
  context.shared["alignment.exact_assignment"] = exact_assignment;

  ReportTable matrix;
  matrix.title =
      fmt::format("Accuracy of each embedding on each condition ('{}')", context.target.split);
  matrix.header = {"condition"};
  for (std::size_t l = 0; l < embeddings; ++l)
    matrix.header.push_back(psi_name(static_cast<int>(l)));
  for (std::size_t c = 0; c < conditions; ++c) {
    std::vector<std::string> row = {names[c]};
    for (std::size_t l = 0; l < embeddings; ++l)
      row.push_back(fmt::format("{:.4f}", a_target(c, l)));
    matrix.rows.push_back(std::move(row));
  }
  ReportTable summary;
  summary.title = fmt::format("Alignment accuracy on '{}' (fitted on '{}')", context.target.split,
                              context.fit.split);
  summary.header = {"condition", "GR ψ", "GR acc", "OT ψ", "OT acc", "exact ψ", "exact acc"};
  for (std::size_t c = 0; c < conditions; ++c) {
    summary.rows.push_back({names[c], psi_name(greedy[c]), fmt::format("{:.4f}", gr_per[c]),
                            psi_name(ot_match[c]), fmt::format("{:.4f}", ot_per[c]),
                            psi_name(exact[c]), fmt::format("{:.4f}", exact_per[c])});
  }
  summary.rows.push_back({"mean", "", fmt::format("{:.4f}", gr_total / n), "",
                          fmt::format("{:.4f}", 1.0 - ot_total), "",
                          fmt::format("{:.4f}", exact_total / n)});
  report.tables = {std::move(matrix), std::move(summary)};
  return report;
}

}  // namespace wscsl::alignment_eval

WSCSL_PLUGIN(alignment, "0.1.0", "GR/OT/exact condition-embedding alignment accuracy") {
  registrar.add<wscsl::Evaluator, wscsl::alignment_eval::Alignment>("alignment");
}
