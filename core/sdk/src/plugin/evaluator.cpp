// The non-virtual half of Evaluator, and the embedding table it reads.
#include <set>

#include "checks.hpp"
#include "wscsl/plugin/evaluator.hpp"

namespace wscsl {

using detail::broke_contract;
using detail::guarded;

Evaluator::~Evaluator() = default;

torch::Tensor EmbeddingTable::rows_of(const torch::Tensor& ids) const {
  const torch::Tensor flat = ids.reshape({-1});
  const torch::Tensor rows =
      torch::searchsorted(image_ids, flat).clamp_max(std::max<int64_t>(image_ids.size(0) - 1, 0));
  if (flat.numel() > 0 && (image_ids.numel() == 0 || !image_ids.index_select(0, rows).equal(flat)))
    throw ComponentError(
        fmt::format("split '{}': an image id has no row in the embedding table (only images that "
                    "the split's triplets, outfits and query and candidate lines reference are "
                    "embedded)",
                    split_name(split)));
  return rows.reshape(ids.sizes());
}

EvalReport Evaluator::evaluate(EvalContext& context) {
  EvalReport report = guarded(*this, "evaluate", [&] { return evaluate_impl(context); });
  std::set<std::string> declared;
  for (const MetricSpec& m : contract().metrics)
    for (const std::string& name : expand_metric_name(m.name, context.info.condition_names()))
      declared.insert(name);
  for (const Metric& m : report.metrics)
    if (!declared.count(m.name))
      broke_contract(
          *this,
          fmt::format("it reported the metric '{}', which its contract does not declare", m.name));
  return report;
}

}  // namespace wscsl
