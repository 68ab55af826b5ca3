#include "alignment.hpp"

#include <fmt/format.h>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/eval/alignment.hpp"
#include "wscsl/eval/triplet_math.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::alignment_eval {
namespace {

using wscsl::alignment::Matrix;

// A[c, l]: accuracy of embedding l on the triplets of condition c.
Matrix accuracy_matrix(EvalContext& context, const EmbeddingTable& table, TieRule ties) {
  if (!table.triplets.conditions.defined())
    throw Error(
        fmt::format("alignment: split '{}' has no triplet conditions; the criterion needs "
                    "them",
                    split_name(table.split)));
  auto [close, far] = embedding_distances(context.module, table, context.batch_size);
  const auto names = context.info.condition_names();
  const auto c = static_cast<std::int64_t>(names.size());
  const ConditionAccuracy by =
      accuracy_by_condition(triplet_correctness(close, far, ties), table.triplets.conditions, c);
  Matrix a(static_cast<std::size_t>(c), static_cast<std::size_t>(close.size(1)));
  for (std::int64_t i = 0; i < c; ++i) {
    if (by.counts[i].item<std::int64_t>() == 0)
      throw Error(fmt::format("alignment: split '{}' has no triplets of condition '{}'",
                              split_name(table.split), names[static_cast<std::size_t>(i)]));
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

// One alignment strategy: its plan fitted on the validation table (rows sum to 1/C) and what it
// gives on the evaluated table.
struct Fitted {
  aligned::Strategy strategy;  // whose results are published
  std::string metric;          // metric prefix: gr, ot, exact
  std::string label;           // table heading: GR, OT, exact
  Matrix plan;
  std::vector<double> per_condition;  // 1 − Σ_l (T_cl / Σ_l T_cl) C_target[c, l]
  double accuracy = 0;                // 1 − <T, C_target>
  std::vector<int> embedding_of_condition, condition_of_embedding;
};

void apply(Fitted& f, const Matrix& cost_target) {
  f.per_condition.assign(f.plan.rows, 0.0);
  double total = 0;
  for (std::size_t c = 0; c < f.plan.rows; ++c) {
    double mass = 0, cost = 0;
    for (std::size_t l = 0; l < f.plan.cols; ++l) {
      mass += f.plan(c, l);
      cost += f.plan(c, l) * cost_target(c, l);
    }
    f.per_condition[c] = 1.0 - cost / mass;
    total += cost;
  }
  f.accuracy = 1.0 - total;
  f.embedding_of_condition = alignment::row_argmax(f.plan);
  f.condition_of_embedding = alignment::column_argmax(f.plan);
}

torch::Tensor long_tensor(const std::vector<int>& v) {
  return torch::tensor(std::vector<std::int64_t>(v.begin(), v.end()), torch::kLong);
}

void publish(const Fitted& f, std::map<std::string, torch::Tensor>& shared) {
  shared[aligned::assignment_key(f.strategy)] = long_tensor(f.embedding_of_condition);
  shared[aligned::condition_of_embedding_key(f.strategy)] = long_tensor(f.condition_of_embedding);
  shared[aligned::plan_key(f.strategy)] = torch::tensor(f.plan.values, torch::kDouble)
                                              .reshape({static_cast<std::int64_t>(f.plan.rows),
                                                        static_cast<std::int64_t>(f.plan.cols)});
}

// The conditions a greedy choice gives embedding l (several or none), joined.
std::string greedy_conditions(const Fitted& greedy, std::size_t l,
                              const std::vector<std::string>& names) {
  std::vector<std::string> chosen;
  for (std::size_t c = 0; c < names.size(); ++c)
    if (greedy.embedding_of_condition[c] == static_cast<int>(l)) chosen.push_back(names[c]);
  return chosen.empty() ? "-" : join(chosen, ", ");
}

Fitted fit(aligned::Strategy strategy, std::string metric, std::string label, Matrix plan) {
  Fitted f;
  f.strategy = strategy;
  f.metric = std::move(metric);
  f.label = std::move(label);
  f.plan = std::move(plan);
  return f;
}

std::string condition_name(int c, const std::vector<std::string>& names) {
  return c < 0 ? "-" : names[static_cast<std::size_t>(c)];
}

}  // namespace

Schema<AlignmentOptions> Alignment::schema() {
  using O = AlignmentOptions;
  Schema<O> s(
      "GR/OT alignment accuracy (DiscoverNet §4.2): cost C = 1 − A with A[c,l] the accuracy of "
      "embedding l on condition c's triplets; greedy, entropic-OT and exact-OT alignments "
      "(uniform marginals, any number of embeddings) fitted on the validation split and applied "
      "to the evaluated split.");
  s.field("reg", &O::reg, "Entropic regularisation of the Sinkhorn plan (reference: 1e-3).")
      .greater_than(0.0);
  s.field("max_iterations", &O::max_iterations, "Sinkhorn iterations at most (POT: 1000).").min(1);
  s.field("tolerance", &O::tolerance, "Sinkhorn stops when the marginal error is below this.")
      .greater_than(0.0);
  s.field("greedy_fit", &O::greedy_fit,
          "Split the greedy choice is made on: \"target\" (the reference code picks the best "
          "embedding per condition on the evaluated split itself) or \"fit\" (the validation "
          "split, like OT).",
          EnumChoices<GreedyFit>{
              {GreedyFit::Target, "target", "the evaluated split, as the reference code"},
              {GreedyFit::Fit, "fit", "the validation split, like OT"}});
  s.field("ties", &O::ties, tie_rule_doc(), tie_rule_choices());
  return s;
}

Contract Alignment::contract_of(const Options&) {
  Contract c;
  for (const auto& strategy : aligned::strategy_choices())
    c.provides.push_back({Resource::Alignment, strategy.spelling});
  c.needs = {{Resource::TripletConditions}, {Resource::ConditionTriplets}};
  c.metrics = {{"gr_accuracy", "GR"},
               {"ot_accuracy", "OT"},
               {"exact_accuracy"},
               {"ot_converged"},
               {"gr_accuracy/{condition}"},
               {"ot_accuracy/{condition}"},
               {"exact_accuracy/{condition}"}};
  return c;
}

const Matrix& Alignment::greedy_fit_cost(const Matrix& cost_fit, const Matrix& cost_target) const {
  switch (options_.greedy_fit) {
    case GreedyFit::Fit:
      return cost_fit;
    case GreedyFit::Target:
      return cost_target;
  }
  return cost_target;
}

EvalReport Alignment::evaluate_impl(EvalContext& context) {
  const Matrix a_fit = accuracy_matrix(context, context.fit, options_.ties);
  const Matrix a_target = &context.fit == &context.target
                              ? a_fit
                              : accuracy_matrix(context, context.target, options_.ties);
  const Matrix cost_fit = one_minus(a_fit), cost_target = one_minus(a_target);
  const std::size_t conditions = a_fit.rows, embeddings = a_fit.cols;
  const auto names = context.info.condition_names();

  const std::vector<double> a(conditions, 1.0 / static_cast<double>(conditions));
  const std::vector<double> b(embeddings, 1.0 / static_cast<double>(embeddings));
  const alignment::SinkhornResult ot = alignment::sinkhorn_log(
      cost_fit, a, b, options_.reg, static_cast<int>(options_.max_iterations), options_.tolerance);
  const Matrix& greedy_cost = greedy_fit_cost(cost_fit, cost_target);
  std::vector<Fitted> fitted(3);
  fitted[0] =
      fit(aligned::Strategy::Greedy, "gr", "GR",
          alignment::assignment_plan(alignment::greedy_assignment(greedy_cost), embeddings));
  fitted[1] = fit(aligned::Strategy::Ot, "ot", "OT", ot.plan);
  fitted[2] = fit(aligned::Strategy::Exact, "exact", "exact", alignment::exact_transport(cost_fit));
  for (Fitted& f : fitted) {
    apply(f, cost_target);
    publish(f, context.shared);
  }

  EvalReport report;
  for (const Fitted& f : fitted)
    report.metrics.push_back({f.metric + "_accuracy", f.accuracy});
  report.metrics.push_back({"ot_converged", ot.converged ? 1.0 : 0.0});
  for (const Fitted& f : fitted)
    for (std::size_t c = 0; c < conditions; ++c)
      report.metrics.push_back({f.metric + "_accuracy/" + names[c], f.per_condition[c]});

  ReportTable matrix;
  matrix.title = fmt::format("Accuracy of each embedding on each condition ('{}')",
                             split_name(context.target.split));
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
  summary.title = fmt::format("Alignment accuracy on '{}' (fitted on '{}')",
                              split_name(context.target.split), split_name(context.fit.split));
  summary.header = {"condition"};
  for (const Fitted& f : fitted)
    summary.header.insert(summary.header.end(), {f.label + " ψ", f.label + " acc"});
  for (std::size_t c = 0; c < conditions; ++c) {
    std::vector<std::string> row = {names[c]};
    for (const Fitted& f : fitted)
      row.insert(row.end(), {psi_name(f.embedding_of_condition[c]),
                             fmt::format("{:.4f}", f.per_condition[c])});
    summary.rows.push_back(std::move(row));
  }
  std::vector<std::string> mean = {"mean"};
  for (const Fitted& f : fitted)
    mean.insert(mean.end(), {"", fmt::format("{:.4f}", f.accuracy)});
  summary.rows.push_back(std::move(mean));
  ReportTable matched;
  matched.title = "Condition matched to each embedding";
  matched.header = {"embedding", "GR", "OT", "exact"};
  for (std::size_t l = 0; l < embeddings; ++l)
    matched.rows.push_back({psi_name(static_cast<int>(l)), greedy_conditions(fitted[0], l, names),
                            condition_name(fitted[1].condition_of_embedding[l], names),
                            condition_name(fitted[2].condition_of_embedding[l], names)});
  report.tables = {std::move(matrix), std::move(summary), std::move(matched)};
  return report;
}

}  // namespace wscsl::alignment_eval

WSCSL_PLUGIN(alignment, "0.2.0", "GR/OT/exact condition-embedding alignment accuracy") {
  registrar.add<wscsl::Evaluator, wscsl::alignment_eval::Alignment>("alignment");
}
