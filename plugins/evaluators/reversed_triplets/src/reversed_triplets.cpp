#include "reversed_triplets.hpp"

#include <cmath>

#include <fmt/format.h>

#include "wscsl/eval/triplet_math.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl::reversed_triplets {
namespace {

std::vector<double> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

SweepPoint sweep_point(const std::vector<double>& valid_original,
                       const std::vector<double>& valid_reversed,
                       const std::vector<std::int64_t>& order, double fraction) {
  const std::size_t total = valid_original.size();
  SweepPoint p;
  p.fraction = fraction;
  p.reversed = std::llround(fraction * static_cast<double>(total));
  std::vector<bool> is_reversed(total, false);
  for (std::int64_t i = 0; i < p.reversed; ++i)
    is_reversed[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
  double valid = 0, right = 0;
  for (std::size_t t = 0; t < total; ++t) {
    const double v = is_reversed[t] ? valid_reversed[t] : valid_original[t];
    valid += v;
    right += is_reversed[t] ? 1.0 - v : v;
  }
  const double n = static_cast<double>(total);
  p.valid = total ? valid / n : 0.0;
  p.accuracy = total ? right / n : 0.0;
  return p;
}

Schema<ReversedTripletsOptions> ReversedTriplets::schema() {
  using O = ReversedTripletsOptions;
  Schema<O> s(
      "DiscoverNet's reversed-triplet experiment (Fig. 1): the proportion of original and of "
      "reversed triplets (close and far swapped) the module's own prediction calls valid, and a "
      "sweep over the fraction of reversed triplets in the evaluation set.");
  s.field("mode", &O::mode, prediction_mode_doc(), prediction_mode_choices());
  s.field("fractions", &O::fractions,
          "Fractions of reversed triplets of the sweep (each in [0, 1]).");
  s.field("seed", &O::seed, "Seed of the permutation that picks the reversed triplets.").min(0);
  s.field("ties", &O::ties, tie_rule_doc(), tie_rule_choices());
  s.check([](const O& o, FieldChecker& check) {
    for (std::size_t i = 0; i < o.fractions.size(); ++i) {
      const double f = o.fractions[i];
      if (!(f >= 0.0 && f <= 1.0))
        check.error("fractions", fmt::format("every fraction must be in [0, 1], got {}", f));
      // Each fraction names two metrics (sweep_valid@f, sweep_accuracy@f).
      for (std::size_t j = 0; j < i; ++j)
        if (fmt::format("{:g}", o.fractions[j]) == fmt::format("{:g}", f))
          check.error("fractions", fmt::format("the fraction {:g} is listed twice", f));
    }
  });
  return s;
}

Contract ReversedTriplets::contract_of(const Options& options) {
  Contract c;
  c.needs = prediction_needs(options.mode);
  c.needs.push_back({Resource::SplitTriplets});
  c.metrics = {{"original_valid"},
               {"reversed_valid", "reversed valid"},
               {"original_valid/{condition}"},
               {"reversed_valid/{condition}"}};
  for (double f : options.fractions) {
    c.metrics.push_back({fmt::format("sweep_valid@{:g}", f)});
    c.metrics.push_back({fmt::format("sweep_accuracy@{:g}", f)});
  }
  return c;
}

EvalReport ReversedTriplets::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  const bool given = gives_conditions(options_.mode, context.module, table, "reversed_triplets");
  auto [close, far] = fused_distances(context.module, table, context.batch_size, given);
  auto [r_close, r_far] =
      fused_distances(context.module, table, context.batch_size, given, TripletOrder::Reversed);
  const torch::Tensor original = triplet_correctness(close, far, options_.ties);
  const torch::Tensor reversed = triplet_correctness(r_close, r_far, options_.ties);
  const std::int64_t total = original.size(0);
  const auto mean = [](const torch::Tensor& t) {
    return t.numel() ? t.mean().item<double>() : 0.0;
  };

  EvalReport report;
  report.metrics = {{"original_valid", mean(original)}, {"reversed_valid", mean(reversed)}};
  ReportTable by;
  by.title = fmt::format("Triplets predicted valid on '{}' ({})", split_name(table.split),
                         given ? "condition given" : "condition-free");
  by.header = {"condition", "original", "reversed", "triplets"};
  if (table.triplets.conditions.defined()) {
    const auto names = context.info.condition_names();
    const ConditionAccuracy a =
        accuracy_by_condition(torch::stack({original, reversed}, 1), table.triplets.conditions,
                              static_cast<std::int64_t>(names.size()));
    for (std::size_t c = 0; c < names.size(); ++c) {
      const auto row = static_cast<std::int64_t>(c);
      const std::int64_t count = a.counts[row].item<std::int64_t>();
      if (count == 0) continue;
      const double o = a.accuracy[row][0].item<double>(), r = a.accuracy[row][1].item<double>();
      report.metrics.push_back({"original_valid/" + names[c], o});
      report.metrics.push_back({"reversed_valid/" + names[c], r});
      by.rows.push_back(
          {names[c], fmt::format("{:.4f}", o), fmt::format("{:.4f}", r), std::to_string(count)});
    }
  }
  by.rows.push_back({"all", fmt::format("{:.4f}", mean(original)),
                     fmt::format("{:.4f}", mean(reversed)), std::to_string(total)});

  ReportTable sweep;
  sweep.title = fmt::format("Fraction of reversed triplets in '{}' (seed {})",
                            split_name(table.split), options_.seed);
  sweep.header = {"fraction", "reversed", "predicted valid", "accuracy"};
  const std::vector<double> v_original = to_vector(original), v_reversed = to_vector(reversed);
  const std::vector<std::int64_t> order =
      seeded_permutation(static_cast<std::uint64_t>(options_.seed), total);
  for (double f : options_.fractions) {
    const SweepPoint p = sweep_point(v_original, v_reversed, order, f);
    report.metrics.push_back({fmt::format("sweep_valid@{:g}", f), p.valid});
    report.metrics.push_back({fmt::format("sweep_accuracy@{:g}", f), p.accuracy});
    sweep.rows.push_back({fmt::format("{:g}", f), std::to_string(p.reversed),
                          fmt::format("{:.4f}", p.valid), fmt::format("{:.4f}", p.accuracy)});
  }
  report.tables = {std::move(by), std::move(sweep)};
  return report;
}

}  // namespace wscsl::reversed_triplets

WSCSL_PLUGIN(reversed_triplets, "0.1.0",
             "Proportion of original and reversed triplets predicted valid, and a sweep") {
  registrar.add<wscsl::Evaluator, wscsl::reversed_triplets::ReversedTriplets>("reversed_triplets");
}
