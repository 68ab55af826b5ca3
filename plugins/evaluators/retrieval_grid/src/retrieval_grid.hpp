// A picture of retrieval (the papers' Fig. 6): for a few seeded queries, the top-k neighbours
// under the embedding aligned to each condition, each framed green when it shares the query's
// value of that condition and red when it does not.
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::retrieval_grid {

struct RetrievalGridOptions {
  std::int64_t queries = 3;
  std::int64_t k = 8;
  std::int64_t seed = 0;
  aligned::Strategy alignment = aligned::Strategy::Ot;
  std::int64_t cell = 48;
  std::string file = "retrieval_grid.png";
};

class RetrievalGrid final : public Evaluator {
 public:
  using Options = RetrievalGridOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit RetrievalGrid(const Options& options) : options_(options) {}
  bool runs_during_validation() const override { return false; }

 protected:
  EvalReport evaluate_impl(EvalContext& context) override;

 private:
  Options options_;
};

}  // namespace wscsl::retrieval_grid
