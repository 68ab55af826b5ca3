#include "searcher.hpp"

#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "hnsw_graphs.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/clock.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

// Pairs the module scores at once.
constexpr std::int64_t kScoreBatch = 4096;

}  // namespace

IndexSearcher::IndexSearcher(const GlobalOptions& global, const fs::path& index,
                             const fs::path& run, const std::string& run_option)
    : index_(index), manifest_(read_manifest(index)) {
  if (manifest_.rows() == 0)
    throw DataError(
        fmt::format("{} holds no images yet (add some with `wscsl index`)", index.string()));
  std::error_code ec;
  if (run.empty() && !fs::exists(fs::path(manifest_.run) / "resolved.toml", ec))
    throw DataError(fmt::format(
        "{} was made from the run {}, which is not there now (moved or removed?); name where "
        "it is with {} RUN",
        index.string(), manifest_.run, run_option));
  model_ = open_run_model(global, run.empty() ? fs::path(manifest_.run) : run);
  require_same_run(manifest_, *model_, index);
  const ConditionModule& module = *model_->pipeline().condition_module;
  if (module.num_embeddings() != manifest_.embeddings || module.output_dim() != manifest_.psi_dim)
    throw DataError(fmt::format("{}: ψ of {} × {} values, the run's module has {} × {}",
                                manifest_path(index).string(), manifest_.embeddings,
                                manifest_.psi_dim, module.num_embeddings(), module.output_dim()));
  offsets_.push_back(0);
  for (std::size_t c = 0; c < manifest_.chunks.size(); ++c) {
    chunks_.push_back(map_chunk(index, manifest_, c));
    offsets_.push_back(offsets_.back() + manifest_.chunks[c]);
  }
}

IndexSearcher::~IndexSearcher() = default;

std::pair<std::size_t, std::int64_t> IndexSearcher::locate(std::int64_t row) const {
  if (row < 0 || row >= rows())
    throw Error(
        fmt::format("{} has rows 0 to {}; there is no row {}", index_.string(), rows() - 1, row));
  const auto chunk = static_cast<std::size_t>(
      std::upper_bound(offsets_.begin(), offsets_.end(), row) - offsets_.begin() - 1);
  return {chunk, row - offsets_[chunk]};
}

ItemFeatures IndexSearcher::embed_query(const fs::path& image, const std::string& named) {
  return embed_pixels(*model_, read_query_pixels(*model_, image, named));
}

ItemFeatures IndexSearcher::item(std::int64_t row) const {
  return rows_features(torch::tensor({row}, torch::kLong));
}

IndexedImage IndexSearcher::image(std::int64_t row) {
  const auto [chunk, local] = locate(row);
  auto it = images_.find(chunk);
  if (it == images_.end())
    it = images_.emplace(chunk, read_chunk_images(index_, chunk, manifest_.chunks[chunk])).first;
  return it->second[static_cast<std::size_t>(local)];
}

torch::Tensor IndexSearcher::picture(std::int64_t row) {
  const IndexedImage where = image(row);
  if (!where.file.empty()) return file_picture(*model_, where.file);
  return shown_pixels(model_->images, input(row)[0]);
}

torch::Tensor IndexSearcher::input(std::int64_t row) {
  const IndexedImage where = image(row);
  if (!where.file.empty())
    return wscsl::model_input(model_->images, read_query_pixels(*model_, where.file, where.file));
  Split split{};
  if (!parse_split(where.split, split))
    throw DataError(
        fmt::format("{}: row {} names the split '{}'", index_.string(), row, where.split));
  return model_->pipeline().dataset->images(split, torch::tensor({where.id}, torch::kLong), {});
}

const IndexedCondition& IndexSearcher::condition(const std::string& name) const {
  for (const IndexedCondition& c : manifest_.conditions)
    if (c.name == name) return c;
  std::vector<std::string> names;
  for (const IndexedCondition& c : manifest_.conditions)
    names.push_back(c.name);
  throw Error(fmt::format("{} has no condition '{}'; its conditions are: {}", index_.string(), name,
                          join(names, ", ")));
}

ItemFeatures IndexSearcher::rows_features(const torch::Tensor& rows) const {
  // Rows grouped by chunk, then put back in the order asked for.
  const torch::Tensor flat = rows.to(torch::kLong).contiguous();
  const std::int64_t* r = flat.data_ptr<std::int64_t>();
  std::map<std::size_t, std::vector<std::int64_t>> local, position;
  for (std::int64_t i = 0; i < flat.numel(); ++i) {
    const auto [chunk, row] = locate(r[i]);
    local[chunk].push_back(row);
    position[chunk].push_back(i);
  }
  std::vector<ItemFeatures> parts;
  std::vector<std::int64_t> order;
  for (const auto& [chunk, rows_in_chunk] : local) {
    parts.push_back(chunks_[chunk].items(manifest_, torch::tensor(rows_in_chunk, torch::kLong)));
    order.insert(order.end(), position[chunk].begin(), position[chunk].end());
  }
  const ItemFeatures gathered = ItemFeatures::concatenated(parts);
  // inverse[i] = where asked row i sits in `gathered`.
  const torch::Tensor inverse = torch::empty({flat.numel()}, torch::kLong)
                                    .index_put_({torch::tensor(order, torch::kLong)},
                                                torch::arange(flat.numel(), torch::kLong));
  return gathered.rows(inverse);
}

torch::Tensor IndexSearcher::module_distances(const ItemFeatures& query,
                                              const IndexedCondition& condition,
                                              const torch::Tensor& rows) const {
  torch::NoGradGuard no_grad;
  ConditionModule& module = *model_->pipeline().condition_module;
  const torch::Device device = model_->device();
  std::vector<torch::Tensor> parts;
  for (std::int64_t begin = 0; begin < rows.size(0); begin += kScoreBatch) {
    const torch::Tensor some = rows.slice(0, begin, std::min(rows.size(0), begin + kScoreBatch));
    const std::int64_t n = some.size(0);
    const ItemFeatures candidates = rows_features(some);
    torch::Tensor d;
    switch (condition.comparison) {
      case Comparison::Distances:
        d = module
                .distances(
                    query.psi.to(device).expand({n, manifest_.embeddings, manifest_.psi_dim}),
                    candidates.psi.to(device))
                .select(1, condition.embedding);
        break;
      case Comparison::PairScores: {
        // Item 0 is the query, items 1..n the candidates: the pairs (0, j).
        const ItemFeatures items = ItemFeatures::concatenated({query, candidates}).to(device);
        Comparisons pairs =
            Comparisons::pairs(torch::zeros({n}, torch::kLong), torch::arange(1, n + 1));
        if (condition.condition >= 0)
          pairs.conditions = torch::full({n}, condition.condition, torch::kLong);
        d = module.score(items, pairs.to(device)).fused_second;
        break;
      }
    }
    parts.push_back(d.to(torch::kCPU).to(torch::kDouble));
  }
  return parts.empty() ? torch::zeros({0}, torch::kDouble) : torch::cat(parts);
}

std::vector<torch::Tensor> IndexSearcher::exact_candidates(
    const torch::Tensor& query_psi, const std::vector<std::int64_t>& embeddings, std::int64_t pool,
    std::int64_t block_rows, std::int64_t exclude) const {
  torch::NoGradGuard no_grad;
  const torch::Device device = model_->device();
  // The `pool` smallest of `values` (values, positions), nearest first; ties keep the lower one.
  const auto smallest = [pool](const torch::Tensor& values) {
    return values.topk(std::min(pool, values.size(0)), /*dim=*/0, /*largest=*/false, true);
  };
  const torch::Tensor q = query_psi.to(device).to(torch::kFloat);  // [K, E]
  const torch::Tensor q_sqnorm = q.pow(2).sum(-1);                 // [K]
  const std::int64_t k_count = q.size(0);
  const bool every_embedding =
      std::any_of(embeddings.begin(), embeddings.end(), [](std::int64_t e) { return e < 0; });
  std::vector<bool> needed(static_cast<std::size_t>(k_count), every_embedding);
  for (const std::int64_t e : embeddings)
    if (e >= 0) needed[static_cast<std::size_t>(e)] = true;
  // Per condition: the best `pool` (squared distance, row) of every block, chosen from at the end.
  std::vector<std::vector<torch::Tensor>> block_d(embeddings.size()),
      block_found(embeddings.size());
  for (std::size_t chunk = 0; chunk < chunks_.size(); ++chunk) {
    const torch::Tensor& psi = chunks_[chunk].psi->tensor();            // [K, n, E]
    const torch::Tensor& sqnorm = chunks_[chunk].psi_sqnorm->tensor();  // [K, n]
    const std::int64_t n = psi.size(1);
    for (std::int64_t b0 = 0; b0 < n; b0 += block_rows) {
      const std::int64_t b1 = std::min(n, b0 + block_rows);
      const torch::Tensor block = psi.slice(1, b0, b1).to(device);
      const torch::Tensor norms = sqnorm.slice(1, b0, b1).to(device);
      // ‖x − q‖² = ‖x‖² − 2 x·q + ‖q‖², one matrix-vector product per embedding.
      std::vector<torch::Tensor> d2(static_cast<std::size_t>(k_count));
      for (std::int64_t k = 0; k < k_count; ++k)
        if (needed[static_cast<std::size_t>(k)])
          d2[static_cast<std::size_t>(k)] =
              (norms[k] - 2 * block[k].mv(q[k]) + q_sqnorm[k]).clamp_min(0);
      const std::int64_t first_row = offsets_[chunk] + b0;
      for (std::size_t c = 0; c < embeddings.size(); ++c) {
        torch::Tensor d;
        if (embeddings[c] >= 0) {
          d = d2[static_cast<std::size_t>(embeddings[c])];
        } else {
          d = d2[0].clone();
          for (std::int64_t k = 1; k < k_count; ++k)
            d += d2[static_cast<std::size_t>(k)];
        }
        if (exclude >= first_row && exclude < first_row + (b1 - b0)) {
          d = d.clone();
          d[exclude - first_row] = std::numeric_limits<float>::infinity();
        }
        auto [v, i] = smallest(d);
        block_d[c].push_back(v.to(torch::kCPU));
        block_found[c].push_back(i.to(torch::kCPU) + first_row);
      }
    }
  }
  std::vector<torch::Tensor> best_rows(embeddings.size());
  for (std::size_t c = 0; c < embeddings.size(); ++c) {
    const torch::Tensor best =
        torch::cat(block_found[c]).index_select(0, std::get<1>(smallest(torch::cat(block_d[c]))));
    // The excluded row never makes the pool.
    best_rows[c] = best.index_select(0, (best != exclude).nonzero().reshape({-1}));
  }
  return best_rows;
}

HnswGraphs& IndexSearcher::graphs() {
  if (!graphs_) graphs_ = HnswGraphs::load(index_, manifest_);
  return *graphs_;
}

std::vector<ConditionNeighbours> IndexSearcher::search(const ItemFeatures& query,
                                                       const SearchOptions& options,
                                                       std::int64_t exclude) {
  if (options.k < 1) throw Error("-k must be at least 1");
  if (query.size() != 1) throw Error("a search takes one query item");
  std::vector<const IndexedCondition*> conditions;
  if (options.conditions.empty()) {
    for (const IndexedCondition& c : manifest_.conditions)
      conditions.push_back(&c);
  } else {
    for (const std::string& name : options.conditions)
      conditions.push_back(&condition(name));
  }
  const std::int64_t pool = std::max(options.pool, options.k);
  std::vector<ConditionNeighbours> out(conditions.size());
  std::vector<torch::Tensor> candidates;
  auto start = std::chrono::steady_clock::now();
  if (options.candidates == CandidateSearch::Exact) {
    std::vector<std::int64_t> embeddings;
    for (const IndexedCondition* c : conditions)
      embeddings.push_back(c->embedding);
    candidates = exact_candidates(query.psi[0], embeddings, pool,
                                  std::max<std::int64_t>(1, options.block_rows), exclude);
    const double each = milliseconds_since(start) / static_cast<double>(conditions.size());
    for (ConditionNeighbours& c : out)
      c.candidate_ms = each;
  }
  for (std::size_t c = 0; c < conditions.size(); ++c) {
    ConditionNeighbours& result = out[c];
    result.condition = conditions[c]->name;
    if (options.candidates == CandidateSearch::Approximate) {
      start = std::chrono::steady_clock::now();
      candidates.push_back(
          graphs().nearest(conditions[c]->embedding, query.psi[0], pool, options.hnsw_ef, exclude));
      result.candidate_ms = milliseconds_since(start);
    }
    start = std::chrono::steady_clock::now();
    const torch::Tensor& pool_rows = candidates[c];
    const torch::Tensor d = module_distances(query, *conditions[c], pool_rows);
    const torch::Tensor order = std::get<1>(d.sort(/*stable=*/true, 0, false));
    for (std::int64_t i = 0; i < std::min(options.k, order.size(0)); ++i) {
      const std::int64_t j = order[i].item<std::int64_t>();
      result.neighbours.push_back({pool_rows[j].item<std::int64_t>(), d[j].item<double>()});
    }
    result.ranking_ms = milliseconds_since(start);
    if (options.measure_recall) {
      // Every row ranked by the module: what the two stages are measured against.
      torch::Tensor all = torch::arange(rows(), torch::kLong);
      all = all.index_select(0, (all != exclude).nonzero().reshape({-1}));
      const torch::Tensor all_d = module_distances(query, *conditions[c], all);
      const std::int64_t shown = static_cast<std::int64_t>(result.neighbours.size());
      const torch::Tensor truth = all.index_select(
          0, std::get<1>(all_d.sort(/*stable=*/true, 0, false)).slice(0, 0, shown));
      std::int64_t found = 0;
      for (const Neighbour& n : result.neighbours)
        found += (truth == n.row).any().item<bool>();
      result.recall = shown ? static_cast<double>(found) / static_cast<double>(shown) : 1.0;
    }
  }
  return out;
}

}  // namespace wscsl::host::search
