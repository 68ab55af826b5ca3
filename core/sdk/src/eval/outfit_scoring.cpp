#include "wscsl/eval/outfit_scoring.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include <torch/types.h>
#include <torch/utils.h>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/device.hpp"

namespace wscsl::outfit {
namespace {

torch::Tensor long_tensor(std::vector<std::int64_t>& values) {
  return torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kLong)
      .clone();
}

// Number of items of every list, [L] int64.
torch::Tensor list_sizes(const IdLists& lists) {
  if (lists.size() == 0) return torch::zeros({0}, torch::kLong);
  return lists.offsets.slice(0, 1) - lists.offsets.slice(0, 0, -1);
}

// Throws naming the first list with fewer than `minimum` items.
void require_items(const torch::Tensor& sizes, std::int64_t minimum, const std::string& what,
                   const std::string& why) {
  const torch::Tensor short_lists = (sizes < minimum).nonzero();
  if (short_lists.numel() == 0) return;
  const std::int64_t list = short_lists[0][0].item<std::int64_t>();
  const std::int64_t n = sizes[list].item<std::int64_t>();
  throw Error(fmt::format("{} {} has {} item{}: {}", what, list + 1, n, n == 1 ? "" : "s", why));
}

}  // namespace

ItemPairs pairs_within(const IdLists& lists) {
  std::vector<std::int64_t> first, second, owner;
  if (lists.size() > 0) {
    const torch::Tensor offsets = lists.offsets.contiguous(), items = lists.items.contiguous();
    const std::int64_t* off = offsets.data_ptr<std::int64_t>();
    const std::int64_t* item = items.data_ptr<std::int64_t>();
    for (std::int64_t l = 0; l < lists.size(); ++l)
      for (std::int64_t i = off[l]; i < off[l + 1]; ++i)
        for (std::int64_t j = i + 1; j < off[l + 1]; ++j) {
          first.push_back(item[i]);
          second.push_back(item[j]);
          owner.push_back(l);
        }
  }
  return {long_tensor(first), long_tensor(second), long_tensor(owner)};
}

ItemPairs question_candidate_pairs(const BlankQuestions& blanks) {
  std::vector<std::int64_t> first, second, owner;
  const std::int64_t questions = blanks.questions.size();
  if (questions > 0) {
    const torch::Tensor offsets = blanks.questions.offsets.contiguous();
    const torch::Tensor items = blanks.questions.items.contiguous();
    const torch::Tensor candidates = blanks.candidates.contiguous();
    const std::int64_t* off = offsets.data_ptr<std::int64_t>();
    const std::int64_t* item = items.data_ptr<std::int64_t>();
    const std::int64_t* candidate = candidates.data_ptr<std::int64_t>();
    const std::int64_t answers = candidates.size(1);
    for (std::int64_t q = 0; q < questions; ++q)
      for (std::int64_t a = 0; a < answers; ++a)
        for (std::int64_t i = off[q]; i < off[q + 1]; ++i) {
          first.push_back(item[i]);
          second.push_back(candidate[q * answers + a]);
          owner.push_back(q * answers + a);
        }
  }
  return {long_tensor(first), long_tensor(second), long_tensor(owner)};
}

PairScorer::PairScorer(ConditionModule& module, const EmbeddingTable& table,
                       const OutfitData& outfits, std::int64_t batch_size, std::string evaluator)
    : module_(module),
      table_(table),
      outfits_(outfits),
      batch_size_(std::max<std::int64_t>(batch_size, 1)),
      evaluator_(std::move(evaluator)) {}

torch::Tensor PairScorer::conditions(const ItemPairs& pairs) const {
  const torch::Tensor first = outfits_.item_types.index_select(0, pairs.first);
  const torch::Tensor second = outfits_.item_types.index_select(0, pairs.second);
  const torch::Tensor unknown = ((first < 0) | (second < 0)).nonzero();
  if (unknown.numel() > 0) {
    const std::int64_t p = unknown[0][0].item<std::int64_t>();
    const std::int64_t id =
        (first[p].item<std::int64_t>() < 0 ? pairs.first : pairs.second)[p].item<std::int64_t>();
    throw Error(fmt::format(
        "{}: split '{}': item {} has no type, and the conditioned condition module scores a pair "
        "of items under the condition of their type pair",
        evaluator_, split_name(table_.split), id));
  }
  const std::int64_t types = outfits_.type_pair_conditions.size(0);
  return outfits_.type_pair_conditions.reshape({-1}).index_select(0, first * types + second);
}

torch::Tensor PairScorer::distances(const ItemPairs& pairs) const {
  torch::NoGradGuard no_grad;
  const std::int64_t total = pairs.first.size(0);
  Comparisons all = Comparisons::pairs(table_.rows_of(pairs.first), table_.rows_of(pairs.second));
  if (module_.supervision() == Supervision::Conditioned) all.conditions = conditions(pairs);
  const torch::Device device = nn::device_of(module_);
  const ItemBlocks items(table_.items.to(device));
  std::vector<torch::Tensor> parts;
  for (std::int64_t begin = 0; begin < total; begin += batch_size_) {
    const Comparisons some = all.slice(begin, std::min(total, begin + batch_size_)).to(device);
    parts.push_back(module_.score(items, some).fused_second.to(torch::kCPU).to(torch::kDouble));
  }
  return parts.empty() ? torch::zeros({0}, torch::kDouble) : torch::cat(parts);
}

torch::Tensor mean_pair_distances(const PairScorer& scorer, const IdLists& lines,
                                  const std::string& what) {
  const torch::Tensor sizes = list_sizes(lines);
  require_items(sizes, 2, what, "an outfit's score is the mean over its item pairs");
  const ItemPairs pairs = pairs_within(lines);
  const torch::Tensor sums = torch::zeros({lines.size()}, torch::kDouble)
                                 .index_add_(0, pairs.owner, scorer.distances(pairs));
  return sums / (sizes * (sizes - 1) / 2).to(torch::kDouble);
}

BlankScores score_blanks(const PairScorer& scorer, const BlankQuestions& blanks,
                         const std::string& what) {
  require_items(list_sizes(blanks.questions), 1, what,
                "a candidate's score is its summed distance to the question's items");
  const std::int64_t questions = blanks.questions.size();
  const std::int64_t answers = questions > 0 ? blanks.candidates.size(1) : 0;
  const ItemPairs pairs = question_candidate_pairs(blanks);
  BlankScores s;
  s.scores = torch::zeros({questions * answers}, torch::kDouble)
                 .index_add_(0, pairs.owner, scorer.distances(pairs))
                 .reshape({questions, answers});
  s.chosen = first_argmin(s.scores);
  return s;
}

torch::Tensor first_argmin(const torch::Tensor& scores) {
  const torch::Tensor values = scores.to(torch::kDouble).contiguous();
  const std::int64_t rows = values.size(0), columns = values.size(1);
  const double* v = values.data_ptr<double>();
  std::vector<std::int64_t> chosen(static_cast<std::size_t>(rows), 0);
  for (std::int64_t q = 0; q < rows; ++q) {
    const double* row = v + q * columns;
    std::int64_t best = 0;
    // numpy's argmin: a NaN is the minimum, and the first minimum wins.
    for (std::int64_t a = 0; a < columns && !std::isnan(row[best]); ++a)
      if (std::isnan(row[a]) || row[a] < row[best]) best = a;
    chosen[static_cast<std::size_t>(q)] = best;
  }
  return long_tensor(chosen);
}

double roc_auc(const torch::Tensor& scores, const torch::Tensor& labels) {
  const torch::Tensor s = scores.to(torch::kDouble).contiguous().reshape({-1});
  const torch::Tensor y = labels.to(torch::kLong).contiguous().reshape({-1});
  if (s.size(0) != y.size(0))
    throw Error(fmt::format("ROC AUC: {} scores for {} labels", s.size(0), y.size(0)));
  const std::int64_t n = s.size(0);
  const double* score = s.data_ptr<double>();
  const std::int64_t* label = y.data_ptr<std::int64_t>();
  std::int64_t positives = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (label[i] != 0 && label[i] != 1)
      throw Error(fmt::format("ROC AUC: label {} is {}, not 0 or 1", i + 1, label[i]));
    if (std::isnan(score[i])) throw Error(fmt::format("ROC AUC: score {} is NaN", i + 1));
    positives += label[i];
  }
  const std::int64_t negatives = n - positives;
  if (positives == 0 || negatives == 0)
    throw Error(
        fmt::format("ROC AUC is undefined with {} positive and {} negative labels: it "
                    "needs both",
                    positives, negatives));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::int64_t a, std::int64_t b) { return score[a] < score[b]; });
  // Mann-Whitney: sum of the positives' ranks, each tie group sharing its average rank.
  double positive_ranks = 0;
  for (std::int64_t begin = 0; begin < n;) {
    std::int64_t end = begin + 1;
    while (end < n && score[order[static_cast<std::size_t>(end)]] ==
                          score[order[static_cast<std::size_t>(begin)]])
      ++end;
    const double rank = 0.5 * static_cast<double>(begin + 1 + end);
    for (std::int64_t i = begin; i < end; ++i)
      positive_ranks += rank * static_cast<double>(label[order[static_cast<std::size_t>(i)]]);
    begin = end;
  }
  const double p = static_cast<double>(positives), q = static_cast<double>(negatives);
  return (positive_ranks - p * (p + 1) / 2) / (p * q);
}

}  // namespace wscsl::outfit
