// Evaluation: embed every unique image of a split once, then let each evaluator read the tables.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "distributed/strategy.hpp"
#include "pipeline/pipeline.hpp"

namespace wscsl::host {

// The rows of a split's embedding table: every image its triplets, compatibility lines,
// questions and attribute-retrieval query and candidate lines reference, once, ascending (`ids`
// [M]); and its triplets as rows ([T, 3]).
struct EvaluatedImages {
  torch::Tensor ids;
  torch::Tensor triplet_rows;
};
EvaluatedImages evaluated_images(const SplitData& data);

// Embeds each image that a triplet of `split` references, once, in eval mode and without
// gradients, on the device of `strategy` (where the model is). Rows follow ascending image id; the
// table's triplets index rows; its tensors are on the CPU. Each process of `strategy` embeds its
// shard of the images and every process gets the whole table.
EmbeddingTable embed_split(Pipeline& pipeline, Split split, std::int64_t batch_size,
                           const Strategy& strategy);

struct NamedMetric {
  std::string name;  // "<evaluator>/<metric>"
  double value = 0.0;
};

struct EvaluationResult {
  std::vector<NamedMetric> metrics;
  std::vector<ReportTable> tables;
  std::vector<std::filesystem::path> artifacts;

  const NamedMetric* find(const std::string& name) const;
};

// Runs the pipeline's evaluators with alignments fitted on `fit` and measured on `target`.
// While validating (final == false) evaluators that opt out are skipped and nothing is written.
EvaluationResult evaluate(Pipeline& pipeline, const EmbeddingTable& fit,
                          const EmbeddingTable& target, bool final,
                          const std::filesystem::path& artifact_dir);

// What the pipeline's alignment evaluators (those whose contract provides Resource::Alignment)
// publish in EvalContext::shared when fitted on `fit` and measured on `target`; no other
// evaluator runs and nothing is written.
std::map<std::string, torch::Tensor> published_alignments(Pipeline& pipeline,
                                                          const EmbeddingTable& fit,
                                                          const EmbeddingTable& target);

// Tables as aligned plain text, and as Markdown.
std::string format_text(const std::vector<ReportTable>& tables);
std::string format_markdown(const std::vector<ReportTable>& tables);

}  // namespace wscsl::host
