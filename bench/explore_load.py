#!/usr/bin/env python3
"""The load figures of `wscsl explore` (docs/benchmarks.md, "Explorer"): an index of ROWS rows made
by tiling a real index (its rows repeated, each copy's embeddings moved by a little noise, its
images those of the real rows, so that thumbnails and attributes are real), served on loopback and
measured from here:
  * page: the first view as a browser asks for it — the page, script, style, the runs' summary,
    the first gallery page and its 48 thumbnails, one after another, from a cold server;
  * click: neighbours of a random row under every condition (k=10), the server's own time
    (server_ms) and the round trip, p50 and p99 over QUERIES clicks;
  * load: 2,000 requests from 16 connections (neighbours, gallery pages, thumbnails, the script).

Usage: explore_load.py WSCSL REAL_INDEX WORK_DIR [ROWS [QUERIES]]   (numpy needed)
"""
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import numpy as np


def tile(real, out, rows, chunk_rows=8192):
    manifest = json.load(open(os.path.join(real, "manifest.json")))
    assert not manifest["arrays"]["texts"], "an index with text arrays is not tiled here"
    chunks = range(len(manifest["chunks"]))
    part = lambda c, what: os.path.join(real, "chunks", f"{c:06d}.{what}")  # noqa: E731
    phi = np.concatenate([np.load(part(c, "phi.npy")) for c in chunks])
    # Index format 2 and later: ψ is stored [K, n, E], one contiguous array per embedding.
    psi = np.concatenate([np.load(part(c, "psi.npy")) for c in chunks], axis=1)
    images = sum((json.load(open(part(c, "images.json"))) for c in chunks), [])
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "chunks"))
    rng = np.random.default_rng(0)
    sizes = []
    for c, start in enumerate(range(0, rows, chunk_rows)):
        index = np.arange(start, min(rows, start + chunk_rows)) % len(phi)
        noise = lambda a: (a + rng.normal(0, 0.05 * a.std(), a.shape)).astype(np.float32)  # noqa
        p = noise(phi[index])
        s = noise(psi[:, index])
        name = lambda what: os.path.join(out, "chunks", f"{c:06d}.{what}")  # noqa: E731
        np.save(name("phi.npy"), p)
        np.save(name("psi.npy"), s)
        np.save(name("psi_sqnorm.npy"), (s.astype(np.float64) ** 2).sum(-1).astype(np.float32))
        with open(name("images.json"), "w") as f:
            json.dump([images[i] for i in index], f)
        sizes.append(len(index))
    manifest.update(rows=rows, chunks=sizes, skipped=[])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)


def percentiles(values):
    values = sorted(values)
    return statistics.median(values), values[int(0.99 * (len(values) - 1))]


def main(wscsl, real, work, rows="100000", queries="200"):
    rows, queries = int(rows), int(queries)
    index = os.path.join(work, f"tiled-{rows}")
    tile(real, index, rows)
    start = time.monotonic()
    server = subprocess.Popen([wscsl, "explore", index, "--port", "0"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    line = server.stdout.readline()
    port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))
    print(f"rows {rows}: the server listens {time.monotonic() - start:.2f} s after it starts")
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        def get(target):
            c.request("GET", target)
            r = c.getresponse()
            body = r.read()
            assert r.status == 200, f"{target}: {r.status} {body[:200]}"
            return body

        start = time.monotonic()
        for target in ("/", "/app.js", "/style.css", "/api/summary"):
            get(target)
        gallery = json.loads(get("/api/gallery?offset=0&limit=48"))
        for item in gallery["items"]:
            get(f"/api/image?row={item['row']}")
        print(f"page: the first view (page, script, style, summary, gallery, 48 thumbnails) in "
              f"{(time.monotonic() - start) * 1000:.0f} ms")
        rng = random.Random(0)
        server_ms, round_trip = [], []
        for _ in range(queries):
            start = time.monotonic()
            answer = json.loads(get(f"/api/neighbours?row={rng.randrange(rows)}&k=10"))
            round_trip.append((time.monotonic() - start) * 1000)
            server_ms.append(answer["sides"][0]["server_ms"])
        conditions = len(answer["sides"][0]["conditions"])
        print(f"click: neighbours under {conditions} conditions, k=10, {queries} queries: server "
              "p50 {:.1f} ms, p99 {:.1f} ms; round trip p50 {:.1f} ms, p99 {:.1f} ms".format(
                  *percentiles(server_ms), *percentiles(round_trip)))
        c.close()
        latencies, failed, lock = [], [], threading.Lock()

        def worker(seed):
            r = random.Random(seed)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for _ in range(2000 // 16):
                target = r.choice([f"/api/neighbours?row={r.randrange(rows)}&k=10",
                                   f"/api/gallery?offset={48 * r.randrange(100)}&limit=48",
                                   f"/api/image?row={r.randrange(rows)}", "/app.js"])
                t = time.monotonic()
                conn.request("GET", target)
                response = conn.getresponse()
                response.read()
                with lock:
                    latencies.append((time.monotonic() - t) * 1000)
                    if response.status != 200:
                        failed.append(target)
            conn.close()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(f"load: {len(latencies)} requests from 16 connections in "
              f"{time.monotonic() - start:.1f} s, {len(failed)} failed, "
              "p50 {:.1f} ms, p99 {:.1f} ms".format(*percentiles(latencies)))
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    shutil.rmtree(index)


if __name__ == "__main__":
    main(*sys.argv[1:])
