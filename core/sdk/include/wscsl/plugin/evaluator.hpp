// Evaluator: reads the embedding tables of a trained model (every image embedded once) and reports
// metrics, tables and artefacts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "wscsl/plugin/component.hpp"
#include "wscsl/plugin/condition_module.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl {

// One split, embedded once per unique image: its items and the split's triplets among them. Its
// tensors are on the CPU: the host copies the embeddings back from the training device.
struct EmbeddingTable {
  Split split = Split::Test;
  torch::Tensor image_ids;  // [M] dataset image id of each row, ascending
  ItemFeatures items;       // [M] rows: φ, ψ and every text encoder's features
  torch::Tensor factors;    // [M, F] per-row factor labels, or undefined
  // The split's triplets as rows of `items`, with their conditions where the split has them.
  Comparisons triplets;
  torch::Tensor reversed;  // [T] bool, SplitData::reversed: shown reversed by the source file

  // The rows of dataset image ids (any shape, int64), e.g. of an outfit's items. Every image the
  // split's triplets, outfits and attribute-retrieval lines reference has a row; an id without
  // one is a ComponentError.
  torch::Tensor rows_of(const torch::Tensor& ids) const;
};

struct Metric {
  std::string name;  // "ot_accuracy"; the host prefixes the evaluator's name
  double value = 0.0;
};

struct ReportTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct EvalReport {
  std::vector<Metric> metrics;
  std::vector<ReportTable> tables;
  std::vector<std::filesystem::path> artifacts;  // files written under EvalContext::artifact_dir
};

struct EvalContext {
  const EmbeddingTable& fit;     // the split alignments are fitted on (validation)
  const EmbeddingTable& target;  // the split being evaluated (test; validation during training)
  ConditionModule& module;       // in eval mode; score() works on cached embeddings
  Dataset& dataset;
  const DatasetInfo& info;
  std::filesystem::path artifact_dir;  // where pictures go; empty while validating
  // Results earlier evaluators publish for later ones, e.g. "alignment.assignment".
  std::map<std::string, torch::Tensor>& shared;
  bool final_evaluation = false;  // false during per-epoch validation
  std::int64_t batch_size = 1024;
};

class Evaluator : public Component {
 public:
  static constexpr Kind kind_v = Kind::Evaluator;
  ~Evaluator() override;
  Kind kind() const noexcept final { return Kind::Evaluator; }

  // Runs the evaluator; every metric it reports must be one its contract declares.
  EvalReport evaluate(EvalContext& context);
  // Expensive evaluators (pictures) return false and run only in the final evaluation.
  virtual bool runs_during_validation() const { return true; }

 protected:
  virtual EvalReport evaluate_impl(EvalContext& context) = 0;
};

}  // namespace wscsl
