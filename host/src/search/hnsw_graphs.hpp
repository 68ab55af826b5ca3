// The approximate candidate search of an index: one HNSW graph (hnswlib, Malkov & Yashunin 2018)
// per embedding the index's conditions draw candidates from, in the Euclidean space of ψ_k (or of
// every ψ_k together), labelled by index row. Saved beside the chunks as hnsw.<k>.bin
// (hnsw.all.bin) with hnsw.json recording the rows they hold; `wscsl index --approximate` builds
// them, and rebuilds them after images were added.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <torch/types.h>

#include "index_format.hpp"

namespace wscsl::host::search {

struct HnswSettings {
  std::int64_t m = 16;                 // links per node (hnswlib's M)
  std::int64_t ef_construction = 200;  // candidate list while building
};

class HnswGraphs {
 public:
  ~HnswGraphs();
  // Builds and saves the graphs of every embedding `manifest`'s conditions use.
  static void build(const std::filesystem::path& index, const IndexManifest& manifest,
                    const HnswSettings& settings, std::FILE* progress);
  // Loads them; throws DataError when the index has none, or graphs of fewer rows than it has
  // now (images were added since), naming the command that builds them.
  static std::unique_ptr<HnswGraphs> load(const std::filesystem::path& index,
                                          const IndexManifest& manifest);

  // The rows of the `n` nearest items to ψ of the query (`psi` [K, E]) in embedding `embedding`
  // (-1: every ψ_k), nearest first, row `exclude` left out (-1: none), searched with a candidate
  // list of `ef` (at least the rows it looks for): the approximate candidates of `wscsl search`,
  // as exact_candidates (exact_scan.hpp) finds them exactly.
  torch::Tensor nearest(std::int64_t embedding, const torch::Tensor& psi, std::int64_t n,
                        std::int64_t ef, std::int64_t exclude);
  // hnswlib's searchKnn alone for the vector `query` of the graph's dimension, its result
  // dropped: what nearest() costs without wscsl around it (bench/search.sh).
  void library_search(std::int64_t embedding, const float* query, std::int64_t n, std::int64_t ef);

 private:
  struct Graph;
  HnswGraphs() = default;
  std::map<std::int64_t, std::unique_ptr<Graph>> graphs_;
};

}  // namespace wscsl::host::search
