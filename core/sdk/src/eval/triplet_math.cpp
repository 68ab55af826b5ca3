#include "wscsl/eval/triplet_math.hpp"

#include <torch/types.h>
#include <torch/utils.h>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/device.hpp"

namespace wscsl {

const EnumChoices<TieRule>& tie_rule_choices() {
  static const EnumChoices<TieRule> choices = {
      {TieRule::Half, "half", "a tie counts as half a correct prediction"},
      {TieRule::Strict, "strict", "a tie counts as wrong (the papers and the released code)"}};
  return choices;
}

const char* tie_rule_doc() {
  return "How a triplet whose two distances are equal counts: \"half\" (a collapsed embedding "
         "scores the 50 % of chance) or \"strict\" (wrong: the papers' close < far).";
}

torch::Tensor triplet_correctness(const torch::Tensor& close, const torch::Tensor& far,
                                  TieRule ties) {
  const torch::Tensor correct = (close < far).to(torch::kDouble);
  switch (ties) {
    case TieRule::Half:
      return correct + 0.5 * (close == far).to(torch::kDouble);
    case TieRule::Strict:
      return correct;
  }
  throw Error("internal: unknown tie rule");
}

ConditionAccuracy accuracy_by_condition(const torch::Tensor& correctness,
                                        const torch::Tensor& conditions,
                                        std::int64_t num_conditions) {
  const torch::Tensor c = correctness.to(torch::kDouble).reshape({correctness.size(0), -1});
  const torch::Tensor valid = (conditions >= 0) & (conditions < num_conditions);
  const torch::Tensor rows = conditions.masked_select(valid);
  const torch::Tensor values = c.index({valid});
  torch::Tensor sums = torch::zeros({num_conditions, c.size(1)}, c.options());
  sums.index_add_(0, rows, values);
  torch::Tensor counts = torch::bincount(rows, {}, num_conditions).to(torch::kLong);
  torch::Tensor accuracy = sums / counts.to(torch::kDouble).unsqueeze(1);
  return {accuracy, counts};
}

namespace {

// Calls f(comparisons) for the table's triplets, `batch_size` at a time, on `device`.
template <class F>
void for_each_batch(const EmbeddingTable& table, std::int64_t batch_size, torch::Device device,
                    F&& f) {
  const std::int64_t total = table.triplets.size();
  for (std::int64_t begin = 0; begin < total; begin += batch_size)
    f(table.triplets.slice(begin, std::min(total, begin + batch_size)).to(device));
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> embedding_distances(ConditionModule& module,
                                                            const EmbeddingTable& table,
                                                            std::int64_t batch_size) {
  torch::NoGradGuard no_grad;
  const torch::Device device = nn::device_of(module), home = table.items.psi.device();
  const torch::Tensor psi = table.items.psi.to(device);
  std::vector<torch::Tensor> close, far;
  for_each_batch(table, batch_size, device, [&](const Comparisons& c) {
    const torch::Tensor anchor = psi.index_select(0, c.first);
    close.push_back(module.distances(anchor, psi.index_select(0, c.second)).to(home));
    far.push_back(module.distances(anchor, psi.index_select(0, c.third)).to(home));
  });
  if (close.empty()) {
    const auto empty = torch::zeros({0, module.num_embeddings()}, table.items.psi.options());
    return {empty, empty};
  }
  return {torch::cat(close), torch::cat(far)};
}

std::pair<torch::Tensor, torch::Tensor> fused_distances(ConditionModule& module,
                                                        const EmbeddingTable& table,
                                                        std::int64_t batch_size,
                                                        bool with_conditions, TripletOrder order) {
  torch::NoGradGuard no_grad;
  const torch::Device device = nn::device_of(module), home = table.items.psi.device();
  const ItemBlocks items(table.items.to(device));
  std::vector<torch::Tensor> close, far;
  for_each_batch(table, batch_size, device, [&](Comparisons c) {
    if (!with_conditions) c = c.without_conditions();
    if (order == TripletOrder::Reversed) c = c.reversed();
    const ComparisonScores s = module.score(items, c);
    close.push_back(s.fused_second.to(home));
    far.push_back(s.fused_third.to(home));
  });
  if (close.empty())
    return {torch::zeros({0}, table.items.psi.options()),
            torch::zeros({0}, table.items.psi.options())};
  return {torch::cat(close), torch::cat(far)};
}

const EnumChoices<PredictionMode>& prediction_mode_choices() {
  static const EnumChoices<PredictionMode> choices = {
      {PredictionMode::Auto, "auto", "condition-given for conditioned modules, else free"},
      {PredictionMode::ConditionFree, "condition_free", "never show the condition (WS-CSL)"},
      {PredictionMode::ConditionGiven, "condition_given", "show each triplet's condition"}};
  return choices;
}

std::vector<Need> prediction_needs(PredictionMode mode) {
  switch (mode) {
    case PredictionMode::ConditionGiven:
      return {{Resource::TripletConditions}};
    case PredictionMode::Auto:
    case PredictionMode::ConditionFree:
      return {};
  }
  return {};
}

const char* prediction_mode_doc() {
  return "\"condition_free\": the module never sees the triplet's condition (the WS-CSL "
         "protocol); \"condition_given\": it does (supervised CSL); \"auto\": condition-given "
         "for modules trained with conditions, condition-free otherwise.";
}

bool gives_conditions(PredictionMode mode, const ConditionModule& module,
                      const EmbeddingTable& table, const std::string& evaluator) {
  bool given = false;
  switch (mode) {
    case PredictionMode::ConditionGiven:
      given = true;
      break;
    case PredictionMode::Auto:
      given = module.supervision() == Supervision::Conditioned;
      break;
    case PredictionMode::ConditionFree:
      break;
  }
  if (given && !table.triplets.conditions.defined())
    throw Error(fmt::format("{}: split '{}' has no triplet conditions to give", evaluator,
                            split_name(table.split)));
  return given;
}

}  // namespace wscsl
