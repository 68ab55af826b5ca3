// Fill-in-the-blank (Vasileva et al., ECCV 2018; Han et al., ACM MM 2017; SCE-Net's Tables 1–4):
// for each question, the candidate with the smallest summed distance to the question's items, each
// pair scored by the module under the condition of its type pair; accuracy overall and over the
// questions whose right answer is of a given type (SCE-Net's unseen categories, Table 3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/sdk.hpp"

namespace wscsl::fill_in_the_blank {

struct FillInTheBlankOptions {
  std::vector<std::string> types;
  std::string file = "fill_in_the_blank.tsv";
  std::int64_t shown = 4;
  std::int64_t cell = 48;
  std::string picture = "fill_in_the_blank.png";
};

class FillInTheBlank final : public Evaluator {
 public:
  using Options = FillInTheBlankOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit FillInTheBlank(const Options& options) : options_(options) {}

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::fill_in_the_blank
