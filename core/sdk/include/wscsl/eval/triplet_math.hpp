// Triplet-level computations shared by evaluators: all of them work on embedding tables (each
// image embedded once) and never run the backbone. The module computes on its own device (the
// training device); the results come back to the table's (the CPU).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wscsl/config/schema.hpp"
#include "wscsl/plugin/evaluator.hpp"

namespace wscsl {

// How a triplet whose two distances are equal is counted: as half correct (a collapsed embedding
// then scores 50 %, the chance level), or as wrong, as the papers and the released code count it
// (they test close < far strictly).
enum class TieRule { Half, Strict };
const EnumChoices<TieRule>& tie_rule_choices();
const char* tie_rule_doc();

// 1 where close < far, 0 where close > far, and where they tie 0.5 (TieRule::Half) or 0
// (TieRule::Strict).
torch::Tensor triplet_correctness(const torch::Tensor& close, const torch::Tensor& far,
                                  TieRule ties);

// Mean correctness per condition and column: correctness [T, K], conditions [T] with values in
// [0, C) (other values are ignored) → accuracy [C, K] (float64; NaN for a condition without
// triplets) and counts [C] (int64).
struct ConditionAccuracy {
  torch::Tensor accuracy;
  torch::Tensor counts;
};
ConditionAccuracy accuracy_by_condition(const torch::Tensor& correctness,
                                        const torch::Tensor& conditions,
                                        std::int64_t num_conditions);

// d_k(anchor, close) and d_k(anchor, far) under every embedding for all triplets: two [T, K].
std::pair<torch::Tensor, torch::Tensor> embedding_distances(ConditionModule& module,
                                                            const EmbeddingTable& table,
                                                            std::int64_t batch_size);

// How a triplet is scored: as stored (anchor, close, far), or reversed (anchor, far, close).
enum class TripletOrder { Original, Reversed };

// The module's own fused distances for all triplets: two [T], the distance to the second and to
// the third item of each triplet as scored in `order`. Conditions are passed only when
// `with_conditions` (condition-given prediction for supervised modules).
std::pair<torch::Tensor, torch::Tensor> fused_distances(
    ConditionModule& module, const EmbeddingTable& table, std::int64_t batch_size,
    bool with_conditions, TripletOrder order = TripletOrder::Original);

// The `mode` option of evaluators that use the module's own prediction: whether the module is
// shown each triplet's condition.
enum class PredictionMode { Auto, ConditionFree, ConditionGiven };
const EnumChoices<PredictionMode>& prediction_mode_choices();
const char* prediction_mode_doc();
// What an evaluator predicting in `mode` needs from the pipeline: the triplets' conditions when
// they are always given ("auto" gives them only to a conditioned module, which needs them itself).
std::vector<Need> prediction_needs(PredictionMode mode);
// Whether `mode` gives the module each triplet's condition ("auto": for Conditioned modules).
// Throws Error naming `evaluator` when it does and the table has no conditions.
bool gives_conditions(PredictionMode mode, const ConditionModule& module,
                      const EmbeddingTable& table, const std::string& evaluator);

}  // namespace wscsl
