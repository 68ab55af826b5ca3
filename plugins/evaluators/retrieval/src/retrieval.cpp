#include "retrieval.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/eval/average_precision.hpp"
#include "wscsl/eval/neighbours.hpp"

namespace wscsl::retrieval {
namespace {

// The metrics of one condition, in report order: name, table heading.
struct MetricColumn {
  std::string name, heading;
};

std::vector<MetricColumn> metric_columns(const std::vector<std::int64_t>& k) {
  std::vector<MetricColumn> columns = {{"map", "MAP"},         {"ndcg", "NDCG"},
                                       {"nn", "NN"},           {"map_at_r", "MAP@R"},
                                       {"r_precision", "R-P"}, {"mrr", "MRR"}};
  for (std::int64_t cut : k)
    columns.insert(columns.end(), {{fmt::format("precision@{}", cut), fmt::format("P@{}", cut)},
                                   {fmt::format("recall@{}", cut), fmt::format("R@{}", cut)}});
  return columns;
}

// One query's metrics in the order of metric_columns, [Q, columns].
torch::Tensor per_query_columns(const RankingMetrics& m) {
  std::vector<torch::Tensor> columns = {m.map, m.ndcg, m.nn, m.map_at_r, m.r_precision, m.mrr};
  for (std::int64_t i = 0; i < m.precision.size(1); ++i)
    columns.insert(columns.end(), {m.precision.select(1, i), m.recall.select(1, i)});
  return torch::stack(columns, 1);
}

// Sums of one condition's per-query metrics over the queries that have a relevant item.
struct Totals {
  torch::Tensor sums;  // [columns] float64
  std::int64_t queries = 0;
};

void accumulate(Totals& t, const RankingMetrics& m, const torch::Tensor& valid) {
  const torch::Tensor sums =
      per_query_columns(m).index_select(0, valid.nonzero().squeeze(1)).sum(0);
  t.sums = t.sums.defined() ? t.sums + sums : sums;
  t.queries += valid.sum().item<std::int64_t>();
}

std::string cell(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.4f}", v);
}

std::optional<QueryCount> parse_queries(const std::string& text) {
  if (text == "all") return QueryCount{true, 0};
  std::int64_t count = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, count);
  if (text.empty() || error != std::errc() || stop != end || count < 1) return std::nullopt;
  return QueryCount{false, count};
}

std::string spell_queries(const QueryCount& q) {
  return q.all ? std::string("all") : std::to_string(q.count);
}

std::int64_t largest_cut(const std::vector<std::int64_t>& k) {
  return k.empty() ? 1 : std::max<std::int64_t>(1, *std::max_element(k.begin(), k.end()));
}

// The queries of a table of `images` rows and the database each is ranked against: a seeded
// sample against the other images, or every image against all the others (leave one out).
struct Queries {
  torch::Tensor rows;      // [Q] query rows
  torch::Tensor database;  // [D] database rows, ascending; with leave_one_out every row
  bool leave_one_out = false;
  std::int64_t database_size() const { return database.size(0) - (leave_one_out ? 1 : 0); }
};

Queries choose_queries(const QueryCount& queries, std::int64_t images, std::uint64_t seed) {
  if (queries.all) {
    const torch::Tensor every = torch::arange(images, torch::kLong);
    return {every, every, true};
  }
  QuerySplit split = split_queries(images, queries.count, seed);
  return {std::move(split.queries), std::move(split.database), false};
}

}  // namespace

std::int64_t needed_images(const RetrievalOptions& options) {
  const std::int64_t queries = options.queries.all ? 1 : options.queries.count;
  return queries + largest_cut(options.k);
}

RankingMetrics ranking_metrics(const torch::Tensor& relevant, const std::vector<std::int64_t>& k) {
  const torch::Tensor rel = relevant.to(torch::kDouble);
  const std::int64_t n = rel.size(1);
  const torch::Tensor positions = torch::arange(1, n + 1, rel.options());
  const torch::Tensor hits = rel.cumsum(1);
  const torch::Tensor r = hits.select(1, n - 1);
  const torch::Tensor discount = 1.0 / torch::log2(positions + 1.0);
  const torch::Tensor ideal =
      discount.cumsum(0).index_select(0, (r.to(torch::kLong) - 1).clamp_min(0));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const torch::Tensor undefined = torch::full_like(r, nan);
  RankingMetrics m;
  // Where R = 0 the sums below are 0 / 0: NaN, the undefined value.
  const torch::Tensor precision_at_hits = rel * hits / positions;
  m.map = eval::average_precision(rel, 0, eval::WithoutRelevant::Undefined);
  m.ndcg = torch::where(r > 0, (rel * discount).sum(1) / ideal, undefined);
  m.nn = rel.select(1, 0).clone();
  const torch::Tensor within_r = positions.unsqueeze(0) <= r.unsqueeze(1);
  m.map_at_r = (precision_at_hits * within_r).sum(1) / r;
  m.r_precision = hits.gather(1, (r.to(torch::kLong) - 1).clamp_min(0).unsqueeze(1)).squeeze(1) / r;
  // Before the first relevant item the running count of hits is 0.
  const torch::Tensor first_relevant = (hits == 0).sum(1).to(torch::kDouble) + 1.0;
  m.mrr = torch::where(r > 0, 1.0 / first_relevant, undefined);
  std::vector<torch::Tensor> precision, recall;
  for (std::int64_t cut : k) {
    const torch::Tensor top = hits.select(1, cut - 1);
    precision.push_back(top / static_cast<double>(cut));
    recall.push_back(top / r);
  }
  m.precision = torch::stack(precision, 1);
  m.recall = torch::stack(recall, 1);
  return m;
}

Schema<RetrievalOptions> Retrieval::schema() {
  using O = RetrievalOptions;
  Schema<O> s(
      "Retrieval per condition (Pérez Rey et al., Appendix B): MAP, NDCG, NN precision, "
      "precision@k and Recall@k of a seeded query set against the rest of the evaluated split, "
      "ranked under the embedding aligned to each condition; and pytorch-metric-learning's "
      "MAP@R, R-precision and MRR.");
  s.field("queries", &O::queries,
          "Query images: a count N ≥ 1 (a seeded sample of the split's images, ranked against "
          "every other image), or \"all\" (every image, each ranked against all the others).",
          Spelling<QueryCount>{{"all", "N"}, parse_queries, spell_queries});
  s.field("seed", &O::seed, "Seed of the query sample.").min(0);
  s.field("k", &O::k, "Cut-offs of precision@k and Recall@k.");
  s.field("alignment", &O::alignment,
          "Published alignment that picks each condition's embedding (from an earlier "
          "`alignment` evaluator).",
          aligned::strategy_choices());
  s.field("validate", &O::validate, "Also run during the per-epoch validation.");
  s.field("block_elements", &O::block_elements,
          "Distances held at once: queries are processed in blocks of ⌊block_elements / "
          "(database size · K)⌋ (at least one).")
      .min(1);
  s.check([](const O& o, FieldChecker& check) {
    for (std::int64_t cut : o.k)
      if (cut < 1) check.error("k", fmt::format("every cut-off must be at least 1, got {}", cut));
  });
  return s;
}

Contract Retrieval::contract_of(const Options& options) {
  Contract c;
  c.needs = {{Resource::ImageFactors}, aligned::alignment_need(options.alignment)};
  for (const MetricColumn& m : metric_columns(options.k)) {
    c.metrics.push_back({m.name});
    c.metrics.push_back({m.name + "/{condition}", m.name == "map" ? "MAP {condition}" : ""});
  }
  c.table_rows = {{needed_images(options),
                   options.queries.all
                       ? fmt::format("k = {} (with queries = \"all\")", largest_cut(options.k))
                       : fmt::format("queries = {} and k = {}", options.queries.count,
                                     largest_cut(options.k))}};
  return c;
}

EvalReport Retrieval::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  if (!table.factors.defined())
    throw Error(
        fmt::format("retrieval: split '{}' has no per-image factor labels; retrieval needs them",
                    split_name(table.split)));
  const aligned::AlignedEmbeddings aligned =
      aligned::aligned_embeddings(context, options_.alignment, "retrieval");
  const std::int64_t images = table.items.psi.size(0);
  if (images < needed_images(options_))
    throw Error(fmt::format(
        "retrieval: queries = {} and k = {} need at least {} images, and split '{}' has {}; "
        "lower `queries` or `k`",
        spell_queries(options_.queries), largest_cut(options_.k), needed_images(options_),
        split_name(table.split), images));

  const Queries queries =
      choose_queries(options_.queries, images, static_cast<std::uint64_t>(options_.seed));
  const std::int64_t query_count = queries.rows.size(0);
  const torch::Tensor psi_queries = table.items.psi.index_select(0, queries.rows);
  const torch::Tensor psi_database = table.items.psi.index_select(0, queries.database);
  const torch::Tensor factors_queries = table.factors.index_select(0, queries.rows);
  const torch::Tensor factors_database = table.factors.index_select(0, queries.database);

  const auto names = context.info.condition_names();
  const std::size_t conditions = names.size();
  std::vector<Totals> totals(conditions);
  const std::int64_t embeddings = table.items.psi.size(1);
  const std::int64_t ranked_size = queries.database.size(0);
  const std::int64_t block =
      std::max<std::int64_t>(1, options_.block_elements / (ranked_size * embeddings));
  for (std::int64_t q0 = 0; q0 < query_count; q0 += block) {
    const std::int64_t q1 = std::min(query_count, q0 + block);
    const torch::Tensor distances =
        cross_distances(context.module, psi_queries.slice(0, q0, q1), psi_database);
    const torch::Tensor self = queries.rows.slice(0, q0, q1).unsqueeze(1);
    for (std::size_t c = 0; c < conditions; ++c) {
      const auto column = static_cast<std::int64_t>(c);
      torch::Tensor ranked = rank_database(distances.select(2, aligned.embedding_of_condition[c]));
      // Leaving one out: the query is dropped from its own ranking, wherever it ranks.
      if (queries.leave_one_out)
        ranked = ranked.masked_select(ranked != self).reshape({q1 - q0, ranked_size - 1});
      const torch::Tensor value = factors_queries.slice(0, q0, q1).select(1, column);
      const torch::Tensor relevant =
          (factors_database.select(1, column).take(ranked) == value.unsqueeze(1)) &
          (value >= 0).unsqueeze(1);
      const torch::Tensor valid = relevant.any(1);
      accumulate(totals[c], ranking_metrics(relevant, options_.k), valid);
    }
  }

  const std::vector<MetricColumn> columns = metric_columns(options_.k);
  EvalReport report;
  ReportTable t;
  t.title = fmt::format("Retrieval on '{}': {} queries, {} database images{}, embeddings by {}",
                        split_name(table.split), query_count, queries.database_size(),
                        queries.leave_one_out ? " (every image against all the others)" : "",
                        aligned.source);
  t.header = {"condition", "ψ"};
  for (const MetricColumn& m : columns)
    t.header.push_back(m.heading);
  t.header.push_back("queries");
  std::vector<double> mean(columns.size(), 0.0);
  for (std::size_t c = 0; c < conditions; ++c) {
    const Totals& s = totals[c];
    std::vector<std::string> row = {names[c],
                                    fmt::format("ψ{}", aligned.embedding_of_condition[c] + 1)};
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const double value = s.queries == 0 ? std::numeric_limits<double>::quiet_NaN()
                                          : s.sums[static_cast<std::int64_t>(i)].item<double>() /
                                                static_cast<double>(s.queries);
      report.metrics.push_back({columns[i].name + "/" + names[c], value});
      mean[i] += value / static_cast<double>(conditions);
      row.push_back(cell(value));
    }
    row.push_back(std::to_string(s.queries));
    t.rows.push_back(std::move(row));
  }
  std::vector<std::string> mean_row = {"mean", ""};
  for (double v : mean)
    mean_row.push_back(cell(v));
  t.rows.push_back(std::move(mean_row));
  for (std::size_t i = 0; i < columns.size(); ++i)
    report.metrics.push_back({columns[i].name, mean[i]});
  report.tables.push_back(std::move(t));
  return report;
}

}  // namespace wscsl::retrieval

WSCSL_PLUGIN(retrieval, "0.2.0",
             "Retrieval metrics per condition: MAP, NDCG, NN, MAP@R, R-precision, MRR, P@k, R@k") {
  registrar.add<wscsl::Evaluator, wscsl::retrieval::Retrieval>("retrieval");
}
