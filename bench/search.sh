#!/usr/bin/env bash
# `wscsl index` and `wscsl search` at scale (docs/benchmarks.md, "Search"). Trains DiscoverNet on
# Fashion-CRB for one short epoch (four conditions, one thread), indexes its test split (real
# embeddings: the recall of the approximate search), then indexes of N random rows with the same
# shapes for every N given, each with its HNSW graphs, and measures each on one core
# (taskset -c 0) with build/bin/wscsl_search_bench: build time and peak memory of the graphs, exact
# and approximate query time per condition, hnswlib's own searchKnn time on the same graphs,
# recall@10 of the approximate search against the exact one, private memory; and the same graphs
# searched by hnswlib's Python package from PyPI (bench/search_reference.py), side by side, when
# $PYTHON (default python3) imports hnswlib and numpy; and, when it also imports faiss (PyPI's
# faiss-cpu), hnswlib against FAISS on new random rows of one ψ_k's shape (bench/search_libraries.py).
# Indexes of more than $APPROXIMATE_UP_TO rows (default 100000) are measured twice: exact search
# under every condition, then an index of the same size holding only the first condition, with its
# one HNSW graph (one graph of 10^6 rows takes about a quarter of an hour on one core).
# Usage: [EF_LIST="100 200"] bench/search.sh [rows...]   (default: 10000 100000; EF_LIST: the search lists
# measured, 100 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
scripts/build.sh --target wscsl wscsl_search_bench fashion_crb convnet discovernet margin \
  triplet_accuracy alignment >/dev/null
wscsl=build/bin/wscsl
tool=build/bin/wscsl_search_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one_core=(taskset -c 0)
python=${PYTHON:-python3}
reference() {  # reference <index> <queries> [ef]: hnswlib's Python package on the same graphs
  if "$python" -c "import hnswlib, numpy" 2>/dev/null; then
    "${one_core[@]}" "$python" bench/search_reference.py "$1" "$2" 100 "${3:-100}"
  else
    echo "($python cannot import hnswlib and numpy: no Python reference)"
  fi
}

"$wscsl" train examples/pipelines/default.toml --run-dir "$work/run" \
  --set dataset.train_triplets=3200 --set trainer.epochs=1 --set trainer.device=\"cpu\" \
  --set trainer.log_every=1000 >"$work/train.log"
echo "== real embeddings: Fashion-CRB's test split"
"$wscsl" index "$work/run" --split test --out "$work/real" --approximate | grep -v '^indexed'
"${one_core[@]}" "$tool" measure --index "$work/real" --queries 200
reference "$work/real" 200

libraries=()
for rows in "${sizes[@]}"; do
  [ "$rows" -gt "${APPROXIMATE_UP_TO:-100000}" ] || libraries+=("$rows")
  echo "== $rows random rows"
  "$tool" synthesize --like "$work/real" --rows "$rows" --out "$work/random-$rows"
  if [ "$rows" -gt "${APPROXIMATE_UP_TO:-100000}" ]; then
    "${one_core[@]}" "$tool" measure --index "$work/random-$rows" --queries 50
    rm -rf "$work/random-$rows"
    echo "== $rows random rows, the first condition alone"
    "$tool" synthesize --like "$work/real" --rows "$rows" --conditions 1 --out "$work/random-$rows"
  fi
  /usr/bin/time -f "graphs: %e s, peak RSS %M KiB" "${one_core[@]}" \
    "$wscsl" index "$work/run" --out "$work/random-$rows" --approximate
  for ef in ${EF_LIST:-100}; do
    echo "-- ef = $ef"
    "${one_core[@]}" "$tool" measure --index "$work/random-$rows" --queries 50 --ef "$ef"
    reference "$work/random-$rows" 50 "$ef"
  done
  rm -rf "$work/random-$rows"
done
if [ ${#libraries[@]} -gt 0 ] && "$python" -c "import faiss, hnswlib, numpy" 2>/dev/null; then
  echo "== hnswlib or FAISS"
  "${one_core[@]}" "$python" bench/search_libraries.py "${libraries[@]}"
fi
