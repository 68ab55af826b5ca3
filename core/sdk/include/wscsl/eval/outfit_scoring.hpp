// Outfit scoring shared by the outfit evaluators (compatibility AUC, fill-in-the-blank) and the
// modules that build on them, as the released type-aware network code scores outfits (Vasileva et
// al., ECCV 2018, polyvore_outfits.py: test_compatibility, test_fitb): the distance of a pair of
// items under the module, the mean over an outfit's unordered pairs, the sum over a question's
// items, and sklearn's roc_auc_score.
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/plugin/evaluator.hpp"
#include "wscsl/plugin/outfits.hpp"

namespace wscsl::outfit {

// Pairs of items, as dataset image ids, and the list (outfit, question × candidate) each belongs
// to.
struct ItemPairs {
  torch::Tensor first, second;  // [P] int64 image ids
  torch::Tensor owner;          // [P] int64 index of the pair's list
};

// Every unordered pair (i < j, in list order) of every list: Σ n(n − 1)/2 pairs, list by list.
ItemPairs pairs_within(const IdLists& lists);

// For each question q and candidate column a, the pairs (question item, candidate) in question
// order; owner = q · A + a.
ItemPairs question_candidate_pairs(const BlankQuestions& blanks);

// Distances of item pairs of one split under a condition module, which scores the pairs (u, v)
// from the embeddings computed once per image (a module that provides Resource::PairScores) and
// predicts with fused_second. A conditioned module is shown the pair's condition, the type pair
// OutfitData::type_pair_conditions[type u][type v] (so type-aware masks select the pair's
// subspace); a weakly supervised module is shown none.
class PairScorer {
 public:
  // `evaluator` names the caller in errors.
  PairScorer(ConditionModule& module, const EmbeddingTable& table, const OutfitData& outfits,
             std::int64_t batch_size, std::string evaluator);

  // d(first_p, second_p) for every pair: [P] float64, scored `batch_size` pairs at a time on the
  // module's device. Throws Error when an image has no row in the table, or when the module is
  // conditioned and an item has no type.
  torch::Tensor distances(const ItemPairs& pairs) const;
  // The condition of each pair, [P] int64. Throws Error naming the first item of unknown type.
  torch::Tensor conditions(const ItemPairs& pairs) const;

 private:
  ConditionModule& module_;
  const EmbeddingTable& table_;
  const OutfitData& outfits_;
  std::int64_t batch_size_;
  std::string evaluator_;
};

// The mean distance over the unordered item pairs of every compatibility line: [L] float64.
// Throws Error naming the first line with fewer than two items.
torch::Tensor mean_pair_distances(const PairScorer& scorer, const IdLists& lines,
                                  const std::string& what);

// Fill-in-the-blank: the summed distance of every candidate to the question's items, [Q, A]
// float64, and the chosen column of each question, the first one of smallest score (numpy's
// argmin). Throws Error naming the first question without items.
struct BlankScores {
  torch::Tensor scores;  // [Q, A] float64
  torch::Tensor chosen;  // [Q] int64
};
BlankScores score_blanks(const PairScorer& scorer, const BlankQuestions& blanks,
                         const std::string& what);

// The column of the first smallest value of each row of `scores` [Q, A]: [Q] int64.
torch::Tensor first_argmin(const torch::Tensor& scores);

// The area under the ROC curve of `scores` (higher = more likely positive) against `labels`
// (1 positive, 0 negative), with tied scores counted as sklearn's roc_auc_score counts them (the
// ROC curve's trapezoid over a tie, equal to the Mann-Whitney statistic with average ranks).
// Throws Error unless both labels occur.
double roc_auc(const torch::Tensor& scores, const torch::Tensor& labels);

}  // namespace wscsl::outfit
