#include "retrieval_grid.hpp"

#include <fmt/format.h>

#include "wscsl/eval/aligned.hpp"
#include "wscsl/eval/neighbours.hpp"
#include "wscsl/plot/neighbour_grid.hpp"

namespace wscsl::retrieval_grid {

Schema<RetrievalGridOptions> RetrievalGrid::schema() {
  using O = RetrievalGridOptions;
  Schema<O> s(
      "Top-k neighbours of a few seeded queries under the embedding aligned to each condition, "
      "framed green when they share the query's value of that condition and red otherwise "
      "(DiscoverNet Fig. 6), written as a PNG.");
  s.field("queries", &O::queries,
          "Query images: the first ones of the seeded sample the retrieval evaluator with the "
          "same seed uses; every other image of the split is searched.")
      .min(1);
  s.field("k", &O::k, "Neighbours shown per query and condition.").min(1);
  s.field("seed", &O::seed, "Seed of the query sample.").min(0);
  s.field("alignment", &O::alignment,
          "Published alignment that picks each condition's embedding (from an earlier "
          "`alignment` evaluator).",
          aligned::strategy_choices());
  s.field("cell", &O::cell, "Side of one image in pixels.").min(16).max(512);
  s.field("file", &O::file, "PNG file name under the run's plots directory.");
  return s;
}

Contract RetrievalGrid::contract_of(const Options& options) {
  Contract c;
  c.needs = {{Resource::ImageFactors}, aligned::alignment_need(options.alignment)};
  c.metrics = {{"shown_matching/{condition}"}};
  c.table_rows = {{options.queries + options.k,
                   fmt::format("queries = {} and k = {}", options.queries, options.k)}};
  return c;
}

EvalReport RetrievalGrid::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  if (context.artifact_dir.empty())
    throw Error("retrieval_grid: no artefact directory to write the picture to");
  if (!table.factors.defined())
    throw Error(fmt::format("retrieval_grid: split '{}' has no per-image factor labels",
                            split_name(table.split)));
  const std::int64_t images = table.items.psi.size(0);
  if (options_.queries + options_.k > images)
    throw Error(fmt::format(
        "retrieval_grid: {} queries and {} neighbours need more than the {} images of split '{}'",
        options_.queries, options_.k, images, split_name(table.split)));
  const aligned::AlignedEmbeddings aligned =
      aligned::aligned_embeddings(context, options_.alignment, "retrieval_grid");

  const QuerySplit split =
      split_queries(images, options_.queries, static_cast<std::uint64_t>(options_.seed));
  const torch::Tensor& query_rows = split.queries;
  const torch::Tensor& database_rows = split.database;
  const torch::Tensor distances =
      cross_distances(context.module, table.items.psi.index_select(0, query_rows),
                      table.items.psi.index_select(0, database_rows));
  // Pictures of what the dataset gives the model: its normalisation undone.
  const auto pictures = [&](const torch::Tensor& rows) {
    return shown_pixels(
        context.info.images,
        context.dataset.images(table.split, table.image_ids.index_select(0, rows), {}));
  };
  const torch::Tensor query_images = pictures(query_rows);

  const auto& conditions = context.info.conditions;
  std::vector<plot::NeighbourBlock> blocks;
  EvalReport report;
  for (std::size_t c = 0; c < conditions.size(); ++c) {
    const auto column = static_cast<std::int64_t>(c);
    std::int64_t matching = 0;
    const std::int64_t embedding = aligned.embedding_of_condition[c];
    plot::NeighbourBlock& block = blocks.emplace_back();
    block.heading = fmt::format("{} (psi{})", conditions[c].name, embedding + 1);
    const torch::Tensor nearest =
        rank_database(distances.select(2, embedding)).slice(1, 0, options_.k);
    for (std::int64_t q = 0; q < options_.queries; ++q) {
      const std::int64_t query_row = query_rows[q].item<std::int64_t>();
      const std::int64_t value = table.factors[query_row][column].item<std::int64_t>();
      plot::NeighbourRow& row = block.rows.emplace_back();
      row.query = query_images[q];
      const torch::Tensor rows = database_rows.index_select(0, nearest[q]);
      const torch::Tensor neighbour_images = pictures(rows);
      for (std::int64_t j = 0; j < options_.k; ++j) {
        const bool same =
            value >= 0 &&
            table.factors[rows[j].item<std::int64_t>()][column].item<std::int64_t>() == value;
        matching += same;
        row.neighbours.push_back(neighbour_images[j]);
        row.frames.push_back(same ? plot::kGreen : plot::kRed);
      }
    }
    report.metrics.push_back(
        {"shown_matching/" + conditions[c].name,
         static_cast<double>(matching) / static_cast<double>(options_.queries * options_.k)});
  }
  const plot::Canvas canvas = plot::neighbour_grid(
      fmt::format("Top-{} in '{}' (query left; green: same value, red: different)", options_.k,
                  split_name(table.split)),
      blocks, static_cast<int>(options_.k), static_cast<int>(options_.cell));
  const std::filesystem::path path = context.artifact_dir / options_.file;
  canvas.save_png(path);
  report.artifacts.push_back(path);
  return report;
}

}  // namespace wscsl::retrieval_grid

WSCSL_PLUGIN(retrieval_grid, "0.1.0", "Pictures of the top-k neighbours under each condition") {
  registrar.add<wscsl::Evaluator, wscsl::retrieval_grid::RetrievalGrid>("retrieval_grid");
}
