#!/usr/bin/env bash
# TensorBoard itself reads wscsl's event files (read_with_tensorboard.py, with PyPI's tensorboard):
# a trained run, with every tag docs/evaluation.md lists, and a bench suite of two methods with two
# seeds each, as `tensorboard --logdir` shows them.
# Usage: tensorboard_reads.sh WSCSL PYTHON OUT_DIR   (WSCSL_PLUGIN_PATH set by ctest)
set -euo pipefail
wscsl=$1 python=$2 out=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
reader=("$python" "$root/tests/tensorboard/read_with_tensorboard.py")
rm -rf "$out"
mkdir -p "$out"
pipeline="$root/examples/pipelines/default.toml"
# 2 epochs of 5 steps, the training scalars at every step, on the CPU.
small=(dataset.train_items=256 dataset.val_items=96 dataset.test_items=96
  dataset.train_triplets=320 dataset.val_triplets=64 dataset.test_triplets=64
  trainer.epochs=2 trainer.threads=1 trainer.log_every=1 trainer.device=cpu)

"$wscsl" train "$pipeline" --run-dir "$out/run" "${small[@]/#/--set=}" >"$out/run.log"
"${reader[@]}" run "$out/run" --epochs 2 --steps 10 --loss-term margin/margin

quoted=$(printf '"%s", ' "${small[@]}")
cat >"$out/suite.toml" <<EOF
[suite]
seeds = [1, 2]
set = [${quoted%, }]
output = "suite"

[[methods]]
name = "margin-small"
pipeline = "$pipeline"
set = ["losses.0.margin=0.1"]

[[methods]]
name = "margin-large"
pipeline = "$pipeline"
set = ["losses.0.margin=0.4"]
EOF
"$wscsl" bench "$out/suite.toml" --jobs 2 >"$out/suite.log"
"${reader[@]}" suite "$out/suite" --methods margin-small,margin-large --seeds 1,2
