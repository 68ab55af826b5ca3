#include "hnsw_graphs.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <hnswlib/hnswlib.h>
#include <nlohmann/json.hpp>

#include "index_arrays.hpp"
#include "l2_distance.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

using Json = nlohmann::ordered_json;

// Rows one thread inserts at a time while building a graph.
constexpr std::int64_t kRowsPerTask = 256;

std::string graph_name(std::int64_t embedding) {
  return embedding < 0 ? "all" : std::to_string(embedding);
}

fs::path graph_path(const fs::path& index, std::int64_t embedding) {
  return index / ("hnsw." + graph_name(embedding) + ".bin");
}

fs::path graphs_record(const fs::path& index) {
  return index / "hnsw.json";
}

std::set<std::int64_t> graph_embeddings(const IndexManifest& manifest) {
  std::set<std::int64_t> out;
  for (const IndexedCondition& c : manifest.conditions)
    out.insert(c.embedding);
  return out;
}

// The vectors of embedding `embedding` (-1: every ψ_k side by side) of rows [n, dim], float32,
// from a chunk's ψ [K, n, E].
torch::Tensor vectors(const torch::Tensor& psi, std::int64_t embedding) {
  return (embedding < 0 ? psi.transpose(0, 1).reshape({psi.size(1), -1}) : psi[embedding])
      .to(torch::kFloat)
      .contiguous();
}

// hnswlib's L2 space, with its distance replaced by the AVX2 one where the CPU has it.
class L2Space final : public hnswlib::SpaceInterface<float> {
 public:
  explicit L2Space(std::size_t dim) : plain_(dim), dim_(dim), distance_(simd_l2_distance()) {
    if (!distance_) distance_ = plain_.get_dist_func();
  }
  std::size_t get_data_size() override { return plain_.get_data_size(); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return distance_; }
  void* get_dist_func_param() override { return &dim_; }

 private:
  hnswlib::L2Space plain_;
  std::size_t dim_;
  hnswlib::DISTFUNC<float> distance_;
};

}  // namespace

struct HnswGraphs::Graph {
  std::unique_ptr<L2Space> space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph;
};

HnswGraphs::~HnswGraphs() = default;

void HnswGraphs::build(const fs::path& index, const IndexManifest& manifest,
                       const HnswSettings& settings, std::FILE* progress) {
  const std::int64_t rows = manifest.rows();
  std::vector<ChunkArrays> chunks;
  for (std::size_t c = 0; c < manifest.chunks.size(); ++c)
    chunks.push_back(map_chunk(index, manifest, c));
  Json record = Json::object();
  for (std::int64_t embedding : graph_embeddings(manifest)) {
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t dim =
        embedding < 0 ? manifest.embeddings * manifest.psi_dim : manifest.psi_dim;
    L2Space space(static_cast<std::size_t>(dim));
    hnswlib::HierarchicalNSW<float> graph(&space, static_cast<std::size_t>(rows),
                                          static_cast<std::size_t>(settings.m),
                                          static_cast<std::size_t>(settings.ef_construction));
    // Inserted on LibTorch's threads (at::get_num_threads(): the run's trainer.threads when the
    // index's run is open, else every core this process may use): hnswlib locks per node. The
    // first row goes in alone, so that the others find an entry point, as hnswlib's Python
    // binding does. With more than one thread the graph depends on their timing.
    std::int64_t first_row = 0;
    for (const ChunkArrays& chunk : chunks) {
      const torch::Tensor v = vectors(chunk.psi->tensor(), embedding);
      const float* data = v.data_ptr<float>();
      std::int64_t begin = 0;
      if (first_row == 0) {
        graph.addPoint(data, 0);
        begin = 1;
      }
      at::parallel_for(begin, v.size(0), kRowsPerTask, [&](std::int64_t from, std::int64_t to) {
        for (std::int64_t i = from; i < to; ++i)
          graph.addPoint(data + i * dim, static_cast<hnswlib::labeltype>(first_row + i));
      });
      first_row += v.size(0);
    }
    const fs::path path = graph_path(index, embedding);
    const fs::path temporary = fs::path(path.string() + ".part");
    graph.saveIndex(temporary.string());
    std::error_code ec;
    fs::rename(temporary, path, ec);
    if (ec) throw Error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
    record[graph_name(embedding)] = {{"rows", rows},
                                     {"dim", dim},
                                     {"m", settings.m},
                                     {"ef_construction", settings.ef_construction}};
    fmt::print(progress, "approximate index of {} ({} rows, {}-D): {:.1f} s\n",
               embedding < 0 ? std::string("every ψ") : fmt::format("ψ{}", embedding + 1), rows,
               dim,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    std::fflush(progress);
  }
  write_file_atomically(graphs_record(index), record.dump(2) + "\n");
}

std::unique_ptr<HnswGraphs> HnswGraphs::load(const fs::path& index, const IndexManifest& manifest) {
  const std::string rebuild = fmt::format("build it with `wscsl index {} --out {} --approximate`",
                                          manifest.run, index.string());
  if (!fs::exists(graphs_record(index)))
    throw DataError(fmt::format("{} has no approximate index; {}", index.string(), rebuild));
  const Json record =
      Json::parse(read_text_file(graphs_record(index)), nullptr, /*allow_exceptions=*/false);
  std::unique_ptr<HnswGraphs> graphs(new HnswGraphs());
  for (std::int64_t embedding : graph_embeddings(manifest)) {
    const std::string name = graph_name(embedding);
    const Json* entry = record.is_object() && record.contains(name) ? &record.at(name) : nullptr;
    if (!entry || !entry->contains("rows") || !entry->at("rows").is_number_integer() ||
        !entry->contains("dim") || !entry->at("dim").is_number_integer())
      throw DataError(fmt::format("{}: no graph of {} recorded; {}", graphs_record(index).string(),
                                  name, rebuild));
    const std::int64_t rows = entry->at("rows").get<std::int64_t>();
    if (rows != manifest.rows())
      throw DataError(
          fmt::format("{}: the approximate index holds {} rows, the index {} (images "
                      "were added since); {}",
                      graphs_record(index).string(), rows, manifest.rows(), rebuild));
    const fs::path path = graph_path(index, embedding);
    auto g = std::make_unique<Graph>();
    g->space =
        std::make_unique<L2Space>(static_cast<std::size_t>(entry->at("dim").get<std::int64_t>()));
    try {
      g->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(g->space.get(), path.string());
    } catch (const std::exception& e) {
      throw DataError(fmt::format("{}: {}; {}", path.string(), e.what(), rebuild));
    }
    if (static_cast<std::int64_t>(g->graph->cur_element_count) != rows)
      throw DataError(fmt::format("{}: {} rows where hnsw.json records {}; {}", path.string(),
                                  g->graph->cur_element_count, rows, rebuild));
    graphs->graphs_[embedding] = std::move(g);
  }
  return graphs;
}

torch::Tensor HnswGraphs::nearest(std::int64_t embedding, const torch::Tensor& psi, std::int64_t n,
                                  std::int64_t ef, std::int64_t exclude) {
  Graph& g = *graphs_.at(embedding);
  const torch::Tensor q =
      (embedding < 0 ? psi.reshape({-1}) : psi[embedding]).to(torch::kFloat).contiguous();
  const std::int64_t searched = n + (exclude >= 0 ? 1 : 0);
  g.graph->setEf(static_cast<std::size_t>(std::max(ef, searched)));
  auto found = g.graph->searchKnn(q.data_ptr<float>(), static_cast<std::size_t>(searched));
  std::vector<std::int64_t> rows(found.size());
  for (std::size_t i = found.size(); i-- > 0; found.pop())  // the queue pops the farthest first
    rows[i] = static_cast<std::int64_t>(found.top().second);
  rows.erase(std::remove(rows.begin(), rows.end(), exclude), rows.end());
  if (static_cast<std::int64_t>(rows.size()) > n) rows.resize(static_cast<std::size_t>(n));
  return torch::tensor(rows, torch::kLong);
}

void HnswGraphs::library_search(std::int64_t embedding, const float* query, std::int64_t n,
                                std::int64_t ef) {
  Graph& g = *graphs_.at(embedding);
  g.graph->setEf(static_cast<std::size_t>(std::max(ef, n)));
  g.graph->searchKnn(query, static_cast<std::size_t>(n));
}

}  // namespace wscsl::host::search
