#!/usr/bin/env bash
# A backbone and a condition module scripted in Python (bench/torchscript_equivalents.py) train in
# a wscsl pipeline: stopped and resumed, the run's per-step losses equal an uninterrupted run's;
# it evaluates; its exported weights, loaded back into the scripted modules in Python, reproduce
# `wscsl embed`'s φ and ψ to the bound of float32 summation order (check_round_trip.py).
# Usage: round_trip.sh WSCSL PYTHON OUT_DIR   (WSCSL_PLUGIN_PATH set by ctest)
set -euo pipefail
wscsl=$1 python=$2 out=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"
mkdir -p "$out"
"$python" "$root/bench/torchscript_equivalents.py" "$out/scripts" "$root/examples/pipelines/default.toml"
pipeline="$out/scripts/scripted_both.toml"
# On the CPU, which alone promises that the resumed run's losses are the whole run's, bit for bit.
small=(--set dataset.train_items=256 --set dataset.val_items=96 --set dataset.test_items=96
  --set dataset.train_triplets=320 --set dataset.val_triplets=64 --set dataset.test_triplets=64
  --set trainer.epochs=2 --set trainer.device=cpu)
"$wscsl" check "$pipeline" "${small[@]}"
"$wscsl" train "$pipeline" --run-dir "$out/whole" "${small[@]}"
"$wscsl" train "$pipeline" --run-dir "$out/resumed" "${small[@]}" --stop-after-steps 7
"$wscsl" train --resume "$out/resumed"
cmp "$out/whole/steps.tsv" "$out/resumed/steps.tsv"
"$wscsl" eval "$out/resumed" | grep -q "Alignment accuracy on 'test'"
"$wscsl" embed "$out/resumed" --split test
"$wscsl" export-weights "$out/resumed" --out "$out/resumed/weights.pt"
"$wscsl" export "$pipeline" --out "$out/data" "${small[@]}"
"$python" "$root/tests/python/check_round_trip.py" "$out/scripts" "$out/data" "$out/resumed"
