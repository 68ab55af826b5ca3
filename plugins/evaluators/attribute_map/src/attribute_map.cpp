#include "attribute_map.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "wscsl/eval/average_precision.hpp"
#include "wscsl/eval/neighbours.hpp"

namespace wscsl::attribute_map {
namespace {

std::string cell(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.4f}", v);
}

}  // namespace

std::string metric_stem(std::int64_t top_k) {
  return top_k > 0 ? fmt::format("map@{}", top_k) : std::string("map");
}

Schema<AttributeMapOptions> AttributeMap::schema() {
  using O = AttributeMapOptions;
  Schema<O> s(
      "Attribute-specific retrieval (ASEN's protocol): per attribute, every query line ranks "
      "every candidate line of that attribute by the module's distance under the attribute's "
      "embedding; MAP per attribute and their mean weighted by query counts.");
  s.field("top_k", &O::top_k,
          "Cut-off of the ranked list (the metrics become map@k); 0 ranks every candidate, as "
          "released.")
      .min(0);
  s.field("alignment", &O::alignment,
          "Published alignment that picks each attribute's embedding (from an earlier "
          "`alignment` evaluator) for a weakly supervised module with several embeddings; a "
          "supervised module with one embedding per attribute, or a module with one embedding, "
          "needs none.",
          aligned::strategy_choices());
  s.field("validate", &O::validate, "Also run during the per-epoch validation (as released).");
  s.field("block_elements", &O::block_elements,
          "Distances held at once: queries are ranked in blocks of ⌊block_elements / (candidates "
          "· K)⌋ (at least one).")
      .min(1);
  return s;
}

Contract AttributeMap::contract_of(const Options& options) {
  Contract c;
  c.needs = {{Resource::AttributeQueries},
             {Resource::QueryLines},
             aligned::alignment_need(options.alignment)};
  const std::string stem = metric_stem(options.top_k);
  const std::string heading = options.top_k > 0 ? fmt::format("MAP@{}", options.top_k) : "MAP";
  c.metrics = {{stem, heading}, {stem + "/{condition}", heading + " {condition}"}};
  return c;
}

EvalReport AttributeMap::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  const SplitData& data = context.dataset.split(table.split);
  if (!data.attribute_queries)
    throw Error(fmt::format("attribute_map: split '{}' has no query and candidate lines",
                            split_name(table.split)));
  const AttributeQueries& lines = *data.attribute_queries;
  const aligned::AlignedEmbeddings aligned =
      aligned::aligned_embeddings(context, options_.alignment, "attribute_map");
  const auto names = context.info.condition_names();
  const std::int64_t embeddings = table.items.psi.size(1);
  const std::string stem = metric_stem(options_.top_k);

  EvalReport report;
  ReportTable t;
  t.title = fmt::format(
      "Attribute-specific retrieval on '{}'{}, embeddings by {}", split_name(table.split),
      options_.top_k > 0 ? fmt::format(" (cut at {})", options_.top_k) : "", aligned.source);
  t.header = {"attribute", "ψ", "queries", "candidates",
              options_.top_k > 0 ? fmt::format("MAP@{}", options_.top_k) : std::string("MAP")};
  double weighted = 0.0;
  std::int64_t all_queries = 0;
  for (std::size_t a = 0; a < names.size(); ++a) {
    const auto attribute = static_cast<std::int64_t>(a);
    const torch::Tensor queries =
        lines.queries.index_select(0, lines.queries.select(1, 1).eq(attribute).nonzero().view(-1));
    const torch::Tensor candidates = lines.candidates.index_select(
        0, lines.candidates.select(1, 1).eq(attribute).nonzero().view(-1));
    const std::int64_t q = queries.size(0), n = candidates.size(0);
    const std::int64_t k = aligned.embedding_of_condition[a];
    double sum = 0.0;
    if (q > 0 && n > 0) {
      const torch::Tensor psi_candidates =
          table.items.psi.index_select(0, table.rows_of(candidates.select(1, 0).contiguous()));
      const torch::Tensor candidate_values = candidates.select(1, 2);
      const std::int64_t block =
          std::max<std::int64_t>(1, options_.block_elements / (n * embeddings));
      for (std::int64_t q0 = 0; q0 < q; q0 += block) {
        const torch::Tensor chunk = queries.slice(0, q0, std::min(q, q0 + block));
        const torch::Tensor distances = cross_distances(
            context.module,
            table.items.psi.index_select(0, table.rows_of(chunk.select(1, 0).contiguous())),
            psi_candidates);
        const torch::Tensor ranked = rank_database(distances.select(2, k));
        const torch::Tensor relevant =
            candidate_values.take(ranked) == chunk.select(1, 2).unsqueeze(1);
        // AP as the released APScorer: 0 for a query without any relevant candidate.
        sum += eval::average_precision(relevant, options_.top_k, eval::WithoutRelevant::Zero)
                   .sum()
                   .item<double>();
      }
    }
    // An attribute without queries has no MAP and weighs nothing in the total.
    const double map =
        q > 0 ? sum / static_cast<double>(q) : std::numeric_limits<double>::quiet_NaN();
    if (q > 0) weighted += sum, all_queries += q;
    report.metrics.push_back({stem + "/" + names[a], map});
    t.rows.push_back(
        {names[a], fmt::format("ψ{}", k + 1), std::to_string(q), std::to_string(n), cell(map)});
  }
  const double total = all_queries > 0 ? weighted / static_cast<double>(all_queries)
                                       : std::numeric_limits<double>::quiet_NaN();
  report.metrics.push_back({stem, total});
  t.rows.push_back(
      {"total (weighted by queries)", "", std::to_string(all_queries), "", cell(total)});
  report.tables.push_back(std::move(t));
  return report;
}

}  // namespace wscsl::attribute_map

WSCSL_PLUGIN(attribute_map, "0.1.0",
             "Attribute-specific retrieval MAP (ASEN's protocol on FashionAI, DARN, DeepFashion)") {
  registrar.add<wscsl::Evaluator, wscsl::attribute_map::AttributeMap>("attribute_map");
}
