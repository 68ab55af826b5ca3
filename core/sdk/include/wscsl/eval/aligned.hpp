// The condition ↔ embedding alignment the `alignment` evaluator publishes in EvalContext::shared,
// and how later evaluators (retrieval, plots) read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/config/schema.hpp"
#include "wscsl/plugin/evaluator.hpp"

namespace wscsl::aligned {

// The alignment strategies: "ot" (entropic OT plan), "exact" (exact OT with uniform marginals),
// "greedy" (each condition's best embedding).
enum class Strategy { Ot, Exact, Greedy };
const EnumChoices<Strategy>& strategy_choices();
std::string spelling(Strategy strategy);

// What an evaluator that reads the alignment of `strategy` needs (met by the alignment
// evaluator, or without it by a conditioned module with one embedding per condition).
Need alignment_need(Strategy strategy);

// Keys in EvalContext::shared, per strategy:
//   alignment.<strategy>_assignment            [C] int64: the embedding of each condition
//   alignment.<strategy>_condition_of_embedding [K] int64: the condition of each embedding, -1 =
//   none alignment.<strategy>_plan                  [C, K] float64: the plan (rows sum to 1/C)
std::string assignment_key(Strategy strategy);
std::string condition_of_embedding_key(Strategy strategy);
std::string plan_key(Strategy strategy);

struct AlignedEmbeddings {
  std::vector<std::int64_t> embedding_of_condition;  // [C]
  std::vector<std::int64_t> condition_of_embedding;  // [K], -1 = no condition
  std::string source;  // "alignment (ot)" or "identity (supervised module)", for titles
};

// The alignment of `strategy` published by an earlier alignment evaluator. Without one, a
// supervised (Conditioned) module with as many embeddings as conditions uses embedding k for
// condition k, and a module with one embedding uses it for every condition; any other module is
// an Error naming `evaluator` and the fix.
AlignedEmbeddings aligned_embeddings(const EvalContext& context, Strategy strategy,
                                     const std::string& evaluator);

}  // namespace wscsl::aligned
