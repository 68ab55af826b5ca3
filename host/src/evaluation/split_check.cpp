#include "split_check.hpp"

#include <map>

#include <fmt/format.h>

#include "evaluation.hpp"
#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

// The splits an evaluator reads as its target: the test split after training, and the
// validation split every epoch for one that runs during validation.
std::vector<Split> evaluated_splits(const Pipeline& pipeline, const Evaluator& evaluator) {
  std::vector<Split> splits;
  const DatasetInfo info = pipeline.dataset->info();
  if (pipeline.trainer.validate && evaluator.runs_during_validation() && info.has_split(Split::Val))
    splits.push_back(Split::Val);
  if (pipeline.trainer.evaluate_after && info.has_split(Split::Test)) splits.push_back(Split::Test);
  return splits;
}

}  // namespace

std::vector<SplitSize> check_splits(Pipeline& pipeline) {
  std::vector<SplitSize> sizes;
  std::map<Split, std::int64_t> evaluated;
  for (Split split : pipeline.dataset->info().splits) {
    const SplitData& data = pipeline.dataset->split(split);
    evaluated[split] = evaluated_images(data).ids.size(0);
    sizes.push_back({split, data.triplets.size(0), evaluated[split]});
  }
  Diagnostics diagnostics;
  for (const NamedEvaluator& e : pipeline.evaluators)
    for (const RowsNeed& need : e.evaluator->contract().table_rows)
      for (Split split : evaluated_splits(pipeline, *e.evaluator)) {
        const std::int64_t rows = evaluated.at(split);
        if (rows >= need.rows) continue;
        diagnostics.error(
            e.location,
            fmt::format("evaluator '{}': {} need at least {} images in the {} split, which has {} "
                        "(the images its {} triplets reference)",
                        e.name, need.because, need.rows, split_name(split), rows,
                        pipeline.dataset->split(split).triplets.size(0)),
            {fmt::format("lower them, or give the {} split more images or triplets",
                         split_name(split))});
      }
  if (diagnostics.has_errors()) throw ConfigError(std::move(diagnostics));
  return sizes;
}

}  // namespace wscsl::host
