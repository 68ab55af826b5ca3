#include "triplet_accuracy.hpp"

#include <fmt/format.h>

#include "wscsl/eval/triplet_math.hpp"

namespace wscsl::triplet_accuracy {

Schema<TripletAccuracyOptions> TripletAccuracy::schema() {
  Schema<TripletAccuracyOptions> s(
      "Triplet accuracy with the module's own fused distances, overall and per condition.");
  s.field("mode", &TripletAccuracyOptions::mode, prediction_mode_doc(), prediction_mode_choices());
  s.field("ties", &TripletAccuracyOptions::ties, tie_rule_doc(), tie_rule_choices());
  return s;
}

Contract TripletAccuracy::contract_of(const Options& options) {
  Contract c;
  c.needs = prediction_needs(options.mode);
  c.needs.push_back({Resource::SplitTriplets});
  c.metrics = {{"accuracy", "triplet accuracy"}, {"accuracy/{condition}"}};
  return c;
}

EvalReport TripletAccuracy::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  const bool given = gives_conditions(options_.mode, context.module, table, "triplet_accuracy");
  auto [close, far] = fused_distances(context.module, table, context.batch_size, given);
  const torch::Tensor correct = triplet_correctness(close, far, options_.ties);
  EvalReport report;
  const double overall = correct.numel() ? correct.mean().item<double>() : 0.0;
  report.metrics.push_back({"accuracy", overall});
  ReportTable t;
  t.title = fmt::format("Triplet accuracy on '{}' ({})", split_name(table.split),
                        given ? "condition given" : "condition-free");
  t.header = {"condition", "accuracy", "triplets"};
  if (table.triplets.conditions.defined()) {
    const auto names = context.info.condition_names();
    const ConditionAccuracy by = accuracy_by_condition(
        correct.unsqueeze(1), table.triplets.conditions, static_cast<std::int64_t>(names.size()));
    for (std::size_t c = 0; c < names.size(); ++c) {
      const auto row = static_cast<std::int64_t>(c);
      const std::int64_t count = by.counts[row].item<std::int64_t>();
      if (count == 0) continue;
      const double acc = by.accuracy[row][0].item<double>();
      report.metrics.push_back({"accuracy/" + names[c], acc});
      t.rows.push_back({names[c], fmt::format("{:.4f}", acc), std::to_string(count)});
    }
  }
  t.rows.push_back({"all", fmt::format("{:.4f}", overall), std::to_string(correct.numel())});
  report.tables.push_back(std::move(t));
  return report;
}

}  // namespace wscsl::triplet_accuracy

WSCSL_PLUGIN(triplet_accuracy, "0.1.0", "Triplet accuracy with the module's own prediction") {
  registrar.add<wscsl::Evaluator, wscsl::triplet_accuracy::TripletAccuracy>("triplet_accuracy");
}
