// Attribute-specific retrieval as ASEN and its successors score it on FashionAI, DARN and
// DeepFashion: per attribute, every query line ranks every candidate line of that attribute by
// the module's own distance under the attribute's embedding; AP over the whole ranked list; each
// attribute's MAP and their mean weighted by the attributes' query counts.
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::attribute_map {

struct AttributeMapOptions {
  std::int64_t top_k = 0;  // 0: the whole ranked list
  aligned::Strategy alignment = aligned::Strategy::Ot;
  bool validate = true;
  std::int64_t block_elements = std::int64_t{1} << 24;
};

// "map", or "map@10" with a cut-off: the stem of the metric names.
std::string metric_stem(std::int64_t top_k);

class AttributeMap final : public Evaluator {
 public:
  using Options = AttributeMapOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit AttributeMap(const Options& options) : options_(options) {}
  bool runs_during_validation() const override { return options_.validate; }

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::attribute_map
