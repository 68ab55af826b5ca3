// `wscsl search`: the k nearest images of an index to a query under each condition, ranked by the
// run's condition module itself (ConditionModule::distances or ::score through ItemFeatures and
// Comparisons, as the evaluators score), so that every method ranks as it scores.
//
// Two stages per condition. Candidates: the `pool` rows nearest in the Euclidean distance of the
// condition's ψ_k (or of every ψ_k together), found exactly by LibTorch block products over the
// index's memory-mapped chunks (bounded memory; on the run's device), or approximately by an
// HNSW graph (hnswlib) when the index has one. Ranking: the module's own distance of the query to
// each candidate. Where the module's distance is the Euclidean one of ψ_k (or a monotone function
// of it) the candidates hold the exact top k; where it depends on the pair (a pair branch, a
// type-pair mask) the pool bounds what is searched, and `measure_recall` says what it costs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "index_arrays.hpp"
#include "index_format.hpp"
#include "run_model.hpp"

namespace wscsl::host::search {

class HnswGraphs;

enum class CandidateSearch {
  Exact,        // block products over every row
  Approximate,  // the index's HNSW graphs (`wscsl index --approximate`)
};

inline constexpr std::int64_t kDefaultPool = 100;

struct SearchOptions {
  std::vector<std::string> conditions;  // empty: every condition of the index
  std::int64_t k = 10;
  std::int64_t pool = kDefaultPool;  // candidates per condition the module ranks (at least k)
  CandidateSearch candidates = CandidateSearch::Exact;
  std::int64_t hnsw_ef = 0;  // the HNSW search's candidate list (0: the pool)
  // Also rank every row by the module and report the recall@k of the two-stage result.
  bool measure_recall = false;
  std::int64_t block_rows = 65536;  // rows of one block product
};

struct Neighbour {
  std::int64_t row = 0;
  double distance = 0.0;  // the module's
};

struct ConditionNeighbours {
  std::string condition;
  std::vector<Neighbour> neighbours;                         // nearest first
  double recall = std::numeric_limits<double>::quiet_NaN();  // when measured
  double candidate_ms = 0.0, ranking_ms = 0.0;               // time of the two stages
};

class IndexSearcher {
 public:
  // Opens the index and the run it was made from (`run`, else the one its manifest names),
  // refusing a run with other weights, an index damaged on disk, and one without rows. A run
  // that is no longer where the manifest says is refused naming `run_option`, the command's
  // option that says where it is now.
  IndexSearcher(const GlobalOptions& global, const std::filesystem::path& index,
                const std::filesystem::path& run = {}, const std::string& run_option = "--run");
  ~IndexSearcher();

  const std::filesystem::path& index() const { return index_; }
  const IndexManifest& manifest() const { return manifest_; }
  std::int64_t rows() const { return manifest_.rows(); }
  RunModel& model() { return *model_; }

  // The features of a query image file, through the run (throws DataError calling a file that is
  // not a usable image `named`: read_query_pixels).
  ItemFeatures embed_query(const std::filesystem::path& image, const std::string& named);
  // The features of row `row` of the index (throws Error when there is no such row).
  ItemFeatures item(std::int64_t row) const;
  // Where row `row` came from.
  IndexedImage image(std::int64_t row);
  // The image of row `row` as the model saw it, float [3, S, S] in [0, 1].
  torch::Tensor picture(std::int64_t row);
  // The model input of row `row`, float [1, 3, S, S] on the CPU, as it was when indexed.
  torch::Tensor input(std::int64_t row);

  // The condition of the index named `name`; throws Error listing the index's conditions.
  const IndexedCondition& condition(const std::string& name) const;

  // The neighbours of `query` (one item) under each condition of `options`, `exclude` left out
  // (the query's own row, or -1).
  std::vector<ConditionNeighbours> search(const ItemFeatures& query, const SearchOptions& options,
                                          std::int64_t exclude = -1);

 private:
  // The module's distances of the query to `rows` under `condition`, [rows] float64.
  torch::Tensor module_distances(const ItemFeatures& query, const IndexedCondition& condition,
                                 const torch::Tensor& rows) const;
  ItemFeatures rows_features(const torch::Tensor& rows) const;
  // For each of `embeddings` (a ψ_k's index, or -1: every ψ_k together), the `pool` rows nearest
  // to `query_psi` [K, E] in the Euclidean distance, nearest first, row `exclude` left out (-1:
  // none): LibTorch matrix-vector products over blocks of `block_rows` rows of the memory-mapped
  // chunks, on the run's device, so that memory holds one block's distances and the best rows
  // found so far.
  std::vector<torch::Tensor> exact_candidates(const torch::Tensor& query_psi,
                                              const std::vector<std::int64_t>& embeddings,
                                              std::int64_t pool, std::int64_t block_rows,
                                              std::int64_t exclude) const;
  // The index's HNSW graphs, loaded on first use.
  HnswGraphs& graphs();
  // The chunk of a row and the row within it.
  std::pair<std::size_t, std::int64_t> locate(std::int64_t row) const;

  std::filesystem::path index_;
  IndexManifest manifest_;
  std::unique_ptr<RunModel> model_;
  std::vector<ChunkArrays> chunks_;
  std::vector<std::int64_t> offsets_;  // first row of each chunk, then the row count
  std::map<std::size_t, std::vector<IndexedImage>> images_;  // chunk → its images, read on use
  std::unique_ptr<HnswGraphs> graphs_;                       // loaded on first use
};

}  // namespace wscsl::host::search
