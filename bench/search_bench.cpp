// The measuring tool of bench/search.sh.
//
//   wscsl_search_bench synthesize --like I --rows N --out O [--seed S] [--chunk C] [--conditions C]
//     An index O of N random rows (Gaussian φ and ψ, each ψ_k of unit norm) with the manifest of
//     the real index I (its run, conditions and shapes), for timing at any size; with
//     --conditions, only the first C of I's conditions (so `index --approximate` builds only
//     their graphs: one graph of 10^6 rows takes about a quarter of an hour on one core).
//   wscsl_search_bench measure --index I [--queries Q] [-k K] [--pool P] [--ef E]
//     Searches rows 0..Q−1 of I (each left out of its own results) and prints one line of
//     key=value pairs: rows, the arrays' MiB, exact ms per query (every condition) and per
//     condition, approximate ms per condition (and of its candidate stage alone), hnswlib's own
//     searchKnn ms on the same graphs with the same k and ef, recall@k of the approximate search
//     against the exact one, the distance the graphs use (wscsl's AVX2 one or hnswlib's own), and
//     the process's private memory (RssAnon) before the index was opened and at the end.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "search/hnsw_graphs.hpp"
#include "search/index_arrays.hpp"
#include "search/index_format.hpp"
#include "search/l2_distance.hpp"
#include "search/searcher.hpp"
#include "wscsl/util/clock.hpp"

namespace fs = std::filesystem;
namespace search = wscsl::host::search;

namespace {

std::map<std::string, std::string> options(int argc, char** argv) {
  std::map<std::string, std::string> o;
  for (int i = 2; i + 1 < argc; i += 2)
    o[argv[i]] = argv[i + 1];
  return o;
}

std::string get(const std::map<std::string, std::string>& o, const std::string& key,
                const std::string& otherwise = "") {
  const auto it = o.find(key);
  if (it != o.end()) return it->second;
  if (otherwise.empty()) throw std::runtime_error("missing " + key);
  return otherwise;
}

double rss_anon_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("RssAnon:", 0) == 0) return std::stod(line.substr(8)) / 1024.0;
  return 0.0;
}

int synthesize(const std::map<std::string, std::string>& o) {
  const fs::path like = get(o, "--like"), out = get(o, "--out");
  const std::int64_t rows = std::stoll(get(o, "--rows"));
  const std::int64_t chunk = std::stoll(get(o, "--chunk", "65536"));
  torch::manual_seed(std::stoll(get(o, "--seed", "1")));
  search::IndexManifest m = search::read_manifest(like);
  const std::size_t conditions =
      std::stoul(get(o, "--conditions", std::to_string(m.conditions.size())));
  if (conditions == 0 || conditions > m.conditions.size())
    throw std::runtime_error(fmt::format("--conditions must be 1..{}", m.conditions.size()));
  m.conditions.resize(conditions);
  m.chunks.clear();
  m.skipped.clear();
  fs::create_directories(out / "chunks");
  for (std::int64_t begin = 0; begin < rows; begin += chunk) {
    const std::int64_t n = std::min(chunk, rows - begin);
    wscsl::ItemFeatures items;
    items.phi = torch::randn({n, m.phi_dim});
    items.psi = torch::randn({n, m.embeddings, m.psi_dim});
    items.psi /= items.psi.norm(2, {-1}, true);
    for (const search::TextArray& t : m.texts)
      items.texts[t.name] = {torch::zeros({n, t.dim}), torch::zeros({n}, torch::kBool)};
    std::vector<search::IndexedImage> images;
    for (std::int64_t i = begin; i < begin + n; ++i)
      images.push_back({"", "synthetic", i});
    const std::size_t c = m.chunks.size();
    search::write_chunk_images(out, c, images);
    search::write_chunk_arrays(out, m, c, items);
    m.chunks.push_back(n);
  }
  search::write_manifest(out, m);
  fmt::print("synthesized {} rows into {}\n", rows, out.string());
  return 0;
}

int measure(const std::map<std::string, std::string>& o) {
  const fs::path index = get(o, "--index");
  const std::int64_t queries = std::stoll(get(o, "--queries", "20"));
  search::SearchOptions exact;
  exact.k = std::stoll(get(o, "-k", "10"));
  exact.pool = std::stoll(get(o, "--pool", "100"));
  exact.hnsw_ef = std::stoll(get(o, "--ef", "100"));
  const double rss_before = rss_anon_mib();
  wscsl::host::GlobalOptions global;
  search::IndexSearcher searcher(global, index);
  const search::IndexManifest& m = searcher.manifest();
  const double arrays_mib =
      static_cast<double>(m.rows()) *
      static_cast<double>(m.phi_dim + m.embeddings * m.psi_dim + m.embeddings) * 4.0 / 1048576.0;
  const bool approximate = fs::exists(index / "hnsw.json");
  const std::size_t conditions = m.conditions.size();
  search::SearchOptions approx = exact;
  approx.candidates = search::CandidateSearch::Approximate;
  // A first search maps every page in and loads the graphs: not timed.
  searcher.search(searcher.item(0), exact, 0);
  if (approximate) searcher.search(searcher.item(0), approx, 0);
  double all_ms = 0;
  std::vector<double> exact_ms(conditions, 0.0), approx_ms(conditions, 0.0),
      candidate_ms(conditions, 0.0), library_ms(conditions, 0.0), recall(conditions, 0.0);
  std::vector<std::vector<search::ConditionNeighbours>> truths;
  for (std::int64_t q = 0; q < queries; ++q) {
    const wscsl::ItemFeatures query = searcher.item(q);
    auto start = std::chrono::steady_clock::now();
    truths.push_back(searcher.search(query, exact, q));
    all_ms += wscsl::milliseconds_since(start);
    for (std::size_t c = 0; c < conditions; ++c) {
      search::SearchOptions one = exact;
      one.conditions = {m.conditions[c].name};
      start = std::chrono::steady_clock::now();
      searcher.search(query, one, q);
      exact_ms[c] += wscsl::milliseconds_since(start);
    }
  }
  // The approximate searches of each condition one after another, as hnswlib's Python package is
  // timed (bench/search_reference.py), so that the graph stays in cache between queries as it
  // does there; then hnswlib itself on the graphs the index saved, the same way.
  const std::unique_ptr<search::HnswGraphs> graphs =
      approximate ? search::HnswGraphs::load(index, m) : nullptr;
  for (std::size_t c = 0; approximate && c < conditions; ++c) {
    search::SearchOptions one = approx;
    one.conditions = {m.conditions[c].name};
    for (std::int64_t q = 0; q < queries; ++q) {
      const wscsl::ItemFeatures query = searcher.item(q);
      const auto start = std::chrono::steady_clock::now();
      const auto found = searcher.search(query, one, q);
      approx_ms[c] += wscsl::milliseconds_since(start);
      candidate_ms[c] += found[0].candidate_ms;
      std::int64_t hits = 0;
      const auto& truth = truths[static_cast<std::size_t>(q)][c].neighbours;
      for (const search::Neighbour& n : found[0].neighbours)
        for (const search::Neighbour& t : truth)
          hits += n.row == t.row;
      recall[c] += static_cast<double>(hits) / static_cast<double>(truth.size());
    }
    const std::int64_t e = m.conditions[c].embedding;
    std::vector<torch::Tensor> vectors;
    for (std::int64_t q = 0; q < queries; ++q) {
      const wscsl::ItemFeatures query = searcher.item(q);
      vectors.push_back(
          (e < 0 ? query.psi[0].reshape({-1}) : query.psi[0][e]).contiguous().to(torch::kFloat));
    }
    const auto start = std::chrono::steady_clock::now();
    for (const torch::Tensor& v : vectors)
      graphs->library_search(e, v.data_ptr<float>(), exact.pool + 1,
                             std::max(exact.hnsw_ef, exact.pool));
    library_ms[c] += wscsl::milliseconds_since(start);
  }
  const auto per_query = [&](double total) { return total / static_cast<double>(queries); };
  fmt::print("rows={} arrays_mib={:.1f} exact_all_ms={:.2f}", m.rows(), arrays_mib,
             per_query(all_ms));
  for (std::size_t c = 0; c < conditions; ++c) {
    fmt::print(" exact_ms[{}]={:.2f}", m.conditions[c].name, per_query(exact_ms[c]));
    if (approximate)
      fmt::print(
          " approx_ms[{0}]={1:.3f} approx_candidates_ms[{0}]={2:.3f} hnswlib_ms[{0}]={3:.3f} "
          "recall@{4}[{0}]={5:.3f}",
          m.conditions[c].name, per_query(approx_ms[c]), per_query(candidate_ms[c]),
          per_query(library_ms[c]), exact.k, per_query(recall[c]));
  }
  fmt::print(" graph_distance={} rss_anon_before_mib={:.1f} rss_anon_mib={:.1f}\n",
             search::simd_l2_distance() ? "avx2" : "hnswlib", rss_before, rss_anon_mib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: wscsl_search_bench synthesize|measure ...\n");
    return 2;
  }
  try {
    const std::string command = argv[1];
    const auto o = options(argc, argv);
    if (command == "synthesize") return synthesize(o);
    if (command == "measure") return measure(o);
    std::fprintf(stderr, "unknown command %s\n", command.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wscsl_search_bench: %s\n", e.what());
    return 1;
  }
}
