#include "wscsl/eval/aligned.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::aligned {
namespace {

std::vector<std::int64_t> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kLong).contiguous();
  return std::vector<std::int64_t>(c.data_ptr<std::int64_t>(),
                                   c.data_ptr<std::int64_t>() + c.numel());
}

}  // namespace

const EnumChoices<Strategy>& strategy_choices() {
  static const EnumChoices<Strategy> choices = {
      {Strategy::Ot, "ot", "the entropic optimal-transport plan (the OT criterion)"},
      {Strategy::Exact, "exact", "exact optimal transport with uniform marginals"},
      {Strategy::Greedy, "greedy", "each condition's best embedding (the GR criterion)"}};
  return choices;
}

std::string spelling(Strategy strategy) {
  return spelling_of(strategy_choices(), strategy);
}

Need alignment_need(Strategy strategy) {
  return {Resource::Alignment, spelling(strategy), /*met_by_conditioned_module=*/true};
}

std::string assignment_key(Strategy strategy) {
  return "alignment." + spelling(strategy) + "_assignment";
}

std::string condition_of_embedding_key(Strategy strategy) {
  return "alignment." + spelling(strategy) + "_condition_of_embedding";
}

std::string plan_key(Strategy strategy) {
  return "alignment." + spelling(strategy) + "_plan";
}

AlignedEmbeddings aligned_embeddings(const EvalContext& context, Strategy strategy,
                                     const std::string& evaluator) {
  const std::int64_t conditions = context.info.num_conditions();
  const std::int64_t embeddings = context.module.num_embeddings();
  AlignedEmbeddings a;
  const auto assignment = context.shared.find(assignment_key(strategy));
  const auto inverse = context.shared.find(condition_of_embedding_key(strategy));
  if (assignment != context.shared.end() && inverse != context.shared.end()) {
    a.embedding_of_condition = to_vector(assignment->second);
    a.condition_of_embedding = to_vector(inverse->second);
    a.source = "alignment (" + spelling(strategy) + ")";
  } else if (context.module.supervision() == Supervision::Conditioned && embeddings == conditions) {
    for (std::int64_t k = 0; k < conditions; ++k) {
      a.embedding_of_condition.push_back(k);
      a.condition_of_embedding.push_back(k);
    }
    a.source = "identity (supervised module)";
  } else if (embeddings == 1) {
    a.embedding_of_condition.assign(static_cast<std::size_t>(conditions), 0);
    a.condition_of_embedding.push_back(-1);
    a.source = "the module's one embedding";
  } else {
    throw Error(fmt::format(
        "{}: no alignment of the embeddings with the conditions was published; list an "
        "[[evaluators]] table with type = \"alignment\" before this one (a weakly supervised "
        "module's embedding k has no known condition)",
        evaluator));
  }
  if (static_cast<std::int64_t>(a.embedding_of_condition.size()) != conditions ||
      static_cast<std::int64_t>(a.condition_of_embedding.size()) != embeddings)
    throw Error(
        fmt::format("{}: the published alignment has {} conditions and {} embeddings, the "
                    "model {} and {}",
                    evaluator, a.embedding_of_condition.size(), a.condition_of_embedding.size(),
                    conditions, embeddings));
  return a;
}

}  // namespace wscsl::aligned
