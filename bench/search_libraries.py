#!/usr/bin/env python3
"""hnswlib or FAISS for `wscsl index --approximate` (docs/benchmarks.md, "hnswlib or FAISS"): PyPI's
hnswlib and faiss-cpu on the same N random rows of one ψ_k's shape (Gaussian, unit norm), one
thread each, side by side: HNSW graph build time, query time for the candidate pool `wscsl search`
draws (pool + 1 nearest, ef = max(ef, pool)), recall@10 against exact search (FAISS's IndexFlatL2)
of the library's top 10, and the exact search's own query time. The queries are
new random rows, not rows of the index.

Usage: search_libraries.py ROWS [ROWS ...]   (DIM, M, EF_CONSTRUCTION, EF, POOL, QUERIES from the
environment; defaults are wscsl's: 64, 16, 200, 100, 100, 200)
"""
import os
import sys
import time
from importlib.metadata import version

import faiss
import hnswlib
import numpy as np

dim = int(os.environ.get("DIM", 64))
m = int(os.environ.get("M", 16))
ef_construction = int(os.environ.get("EF_CONSTRUCTION", 200))
ef = int(os.environ.get("EF", 100))
pool = int(os.environ.get("POOL", 100))
queries = int(os.environ.get("QUERIES", 200))
faiss.omp_set_num_threads(1)


def unit_rows(rng, n):
    x = rng.standard_normal((n, dim), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def per_query_ms(search, q):
    start = time.perf_counter()
    found = [search(q[i:i + 1]) for i in range(len(q))]
    return (time.perf_counter() - start) * 1000 / len(q), np.vstack(found)


def recall_at_10(found, truth):
    # An HNSW search ranks the rows it visited by their exact distance, so a true neighbour it
    # found is in its top 10: re-ranking its pool by the same L2 distance changes nothing.
    return np.mean([len(set(f[:10]) & set(t[:10])) / 10 for f, t in zip(found, truth)])


print(f"dim={dim} M={m} ef_construction={ef_construction} ef={max(ef, pool)} "
      f"k={pool + 1} queries={queries} hnswlib={version('hnswlib')} faiss-cpu={version('faiss-cpu')}")
print("| rows | library | build | query (pool) | recall@10 |")
print("|---:|---|---:|---:|---:|")
for rows in map(int, sys.argv[1:]):
    rng = np.random.default_rng(rows)
    data = unit_rows(rng, rows)
    q = unit_rows(rng, queries)

    exact = faiss.IndexFlatL2(dim)
    exact.add(data)
    exact_ms, truth = per_query_ms(lambda v: exact.search(v, pool + 1)[1], q)
    print(f"| {rows} | FAISS IndexFlatL2 (exact) | — | {exact_ms:.3f} ms | 1.000 |")

    start = time.perf_counter()
    h = hnswlib.Index(space="l2", dim=dim)
    h.init_index(max_elements=rows, M=m, ef_construction=ef_construction)
    h.set_num_threads(1)
    h.add_items(data, np.arange(rows))
    build = time.perf_counter() - start
    h.set_ef(max(ef, pool))
    ms, found = per_query_ms(lambda v: h.knn_query(v, k=pool + 1)[0], q)
    print(f"| {rows} | hnswlib | {build:.1f} s | {ms:.3f} ms | {recall_at_10(found, truth):.3f} |")
    del h

    start = time.perf_counter()
    f = faiss.IndexHNSWFlat(dim, m)
    f.hnsw.efConstruction = ef_construction
    f.add(data)
    build = time.perf_counter() - start
    f.hnsw.efSearch = max(ef, pool)
    ms, found = per_query_ms(lambda v: f.search(v, pool + 1)[1], q)
    print(f"| {rows} | FAISS IndexHNSWFlat | {build:.1f} s | {ms:.3f} ms | "
          f"{recall_at_10(found, truth):.3f} |")
    sys.stdout.flush()
