#include "retrieval.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/eval/neighbours.hpp"

namespace wscsl::retrieval {
namespace {

// Sums of one condition's per-query metrics over the queries that have a relevant item.
struct Totals {
  double map = 0, ndcg = 0, nn = 0;
  std::vector<double> precision, recall;
  std::int64_t queries = 0;
};

void accumulate(Totals& t, const RankingMetrics& m, const torch::Tensor& valid) {
  t.map += m.map.masked_select(valid).sum().item<double>();
  t.ndcg += m.ndcg.masked_select(valid).sum().item<double>();
  t.nn += m.nn.masked_select(valid).sum().item<double>();
  for (std::size_t i = 0; i < t.precision.size(); ++i) {
    const auto col = static_cast<std::int64_t>(i);
    t.precision[i] += m.precision.select(1, col).masked_select(valid).sum().item<double>();
    t.recall[i] += m.recall.select(1, col).masked_select(valid).sum().item<double>();
  }
  t.queries += valid.sum().item<std::int64_t>();
}

std::string cell(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.4f}", v);
}

}  // namespace

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
  RankingMetrics m;
  m.map = (rel * hits / positions).sum(1) / r;
  m.ndcg = torch::where(r > 0, (rel * discount).sum(1) / ideal, torch::full_like(r, nan));
  m.nn = rel.select(1, 0).clone();
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
      "ranked under the embedding aligned to each condition.");
  s.field("queries", &O::queries,
          "Query images (a seeded sample of the split's images); every other image is the "
          "database.")
      .min(1);
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
  std::vector<std::string> names = {"map", "ndcg", "nn"};
  for (std::int64_t cut : options.k)
    names.insert(names.end(), {fmt::format("precision@{}", cut), fmt::format("recall@{}", cut)});
  for (const std::string& name : names) {
    c.metrics.push_back({name});
    c.metrics.push_back({name + "/{condition}", name == "map" ? "MAP {condition}" : ""});
  }
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
  if (options_.queries >= images)
    throw Error(fmt::format(
        "retrieval: {} queries leave no database among the {} images of split '{}'; lower "
        "`queries`",
        options_.queries, images, split_name(table.split)));
  const std::int64_t database_size = images - options_.queries;
  for (std::int64_t cut : options_.k)
    if (cut > database_size)
      throw Error(fmt::format("retrieval: k = {} exceeds the database of {} images of split '{}'",
                              cut, database_size, split_name(table.split)));

  const QuerySplit split =
      split_queries(images, options_.queries, static_cast<std::uint64_t>(options_.seed));
  const torch::Tensor& query_rows = split.queries;
  const torch::Tensor& database_rows = split.database;
  const torch::Tensor psi_queries = table.items.psi.index_select(0, query_rows);
  const torch::Tensor psi_database = table.items.psi.index_select(0, database_rows);
  const torch::Tensor factors_queries = table.factors.index_select(0, query_rows);
  const torch::Tensor factors_database = table.factors.index_select(0, database_rows);

  const auto names = context.info.condition_names();
  const std::size_t conditions = names.size();
  std::vector<Totals> totals(conditions);
  for (Totals& t : totals) {
    t.precision.assign(options_.k.size(), 0.0);
    t.recall.assign(options_.k.size(), 0.0);
  }
  const std::int64_t embeddings = table.items.psi.size(1);
  const std::int64_t block =
      std::max<std::int64_t>(1, options_.block_elements / (database_size * embeddings));
  for (std::int64_t q0 = 0; q0 < options_.queries; q0 += block) {
    const std::int64_t q1 = std::min(options_.queries, q0 + block);
    const torch::Tensor distances =
        cross_distances(context.module, psi_queries.slice(0, q0, q1), psi_database);
    for (std::size_t c = 0; c < conditions; ++c) {
      const auto column = static_cast<std::int64_t>(c);
      const torch::Tensor ranked =
          rank_database(distances.select(2, aligned.embedding_of_condition[c]));
      const torch::Tensor value = factors_queries.slice(0, q0, q1).select(1, column);
      const torch::Tensor relevant =
          (factors_database.select(1, column).take(ranked) == value.unsqueeze(1)) &
          (value >= 0).unsqueeze(1);
      const torch::Tensor valid = relevant.any(1);
      accumulate(totals[c], ranking_metrics(relevant, options_.k), valid);
    }
  }

  EvalReport report;
  ReportTable t;
  t.title = fmt::format("Retrieval on '{}': {} queries, {} database images, embeddings by {}",
                        split_name(table.split), options_.queries, database_size, aligned.source);
  t.header = {"condition", "ψ", "MAP", "NDCG", "NN"};
  for (std::int64_t cut : options_.k)
    t.header.insert(t.header.end(), {fmt::format("P@{}", cut), fmt::format("R@{}", cut)});
  t.header.push_back("queries");
  std::vector<std::string> metric_names = {"map", "ndcg", "nn"};
  for (std::int64_t cut : options_.k)
    metric_names.insert(metric_names.end(),
                        {fmt::format("precision@{}", cut), fmt::format("recall@{}", cut)});
  const std::size_t columns = metric_names.size();
  std::vector<double> mean(columns, 0.0);
  for (std::size_t c = 0; c < conditions; ++c) {
    const Totals& s = totals[c];
    const double n = static_cast<double>(s.queries);
    std::vector<double> values = {s.map / n, s.ndcg / n, s.nn / n};
    for (std::size_t i = 0; i < options_.k.size(); ++i)
      values.insert(values.end(), {s.precision[i] / n, s.recall[i] / n});
    std::vector<std::string> row = {names[c],
                                    fmt::format("ψ{}", aligned.embedding_of_condition[c] + 1)};
    for (std::size_t i = 0; i < columns; ++i) {
      report.metrics.push_back({metric_names[i] + "/" + names[c], values[i]});
      mean[i] += values[i] / static_cast<double>(conditions);
      row.push_back(cell(values[i]));
    }
    row.push_back(std::to_string(s.queries));
    t.rows.push_back(std::move(row));
  }
  std::vector<std::string> mean_row = {"mean", ""};
  for (double v : mean)
    mean_row.push_back(cell(v));
  t.rows.push_back(std::move(mean_row));
  for (std::size_t i = 0; i < columns; ++i)
    report.metrics.push_back({metric_names[i], mean[i]});
  report.tables.push_back(std::move(t));
  return report;
}

}  // namespace wscsl::retrieval

WSCSL_PLUGIN(retrieval, "0.1.0", "Retrieval metrics per condition: MAP, NDCG, NN, P@k, R@k") {
  registrar.add<wscsl::Evaluator, wscsl::retrieval::Retrieval>("retrieval");
}
