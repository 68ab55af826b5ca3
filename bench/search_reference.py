#!/usr/bin/env python3
"""hnswlib's Python package (PyPI) on the HNSW graphs of a wscsl index, for bench/search.sh: the
mean knn_query time per condition of rows 0..Q-1 as queries, one at a time on one thread, with the
k and ef that `wscsl search` uses (k = pool + 1, ef = max(ef, pool)).

Usage: search_reference.py INDEX QUERIES POOL EF
"""
import json
import sys
import time

import hnswlib
import numpy as np

index, queries, pool, ef = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
manifest = json.load(open(f"{index}/manifest.json"))
arrays = manifest["arrays"]
psi = np.load(f"{index}/chunks/000000.psi.npy", mmap_mode="r")[:, :queries].transpose(1, 0, 2)
results = []
for condition in manifest["conditions"]:
    embedding = condition["embedding"]
    every = embedding < 0
    dim = arrays["psi_dim"] * (arrays["embeddings"] if every else 1)
    graph = hnswlib.Index(space="l2", dim=dim)
    graph.load_index(f"{index}/hnsw.{'all' if every else embedding}.bin")
    graph.set_ef(max(ef, pool))
    graph.set_num_threads(1)
    vectors = np.ascontiguousarray(psi.reshape(len(psi), -1) if every else psi[:, embedding, :],
                                   dtype=np.float32)
    start = time.perf_counter()
    for i in range(len(vectors)):
        graph.knn_query(vectors[i:i + 1], k=pool + 1)
    elapsed = (time.perf_counter() - start) * 1000 / len(vectors)
    results.append(f"python_hnswlib_ms[{condition['name']}]={elapsed:.3f}")
print(" ".join(results))
