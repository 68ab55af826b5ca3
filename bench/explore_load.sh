#!/usr/bin/env bash
# The load figures of `wscsl explore` (docs/benchmarks.md, "Explorer"): trains DiscoverNet on
# Fashion-CRB for one short epoch (as bench/search.sh), indexes its test split, and measures an
# index of ROWS rows tiled from it with bench/explore_load.py (Debian's python3 and numpy).
# Usage: bench/explore_load.sh [ROWS]   (default: 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-100000}
scripts/build.sh --target wscsl fashion_crb convnet discovernet margin triplet_accuracy \
  alignment >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/bin/wscsl train examples/pipelines/default.toml --run-dir "$work/run" \
  --set dataset.train_triplets=3200 --set trainer.epochs=1 --set trainer.device=\"cpu\" \
  --set trainer.log_every=1000 >"$work/train.log"
build/bin/wscsl index "$work/run" --split test --out "$work/real" | grep -v '^indexed'
/usr/bin/python3 bench/explore_load.py build/bin/wscsl "$work/real" "$work" "$rows"
