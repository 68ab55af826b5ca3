#!/usr/bin/env bash
# What verified checkpoints cost the default pipeline: its steps per second without checkpoints
# inside an epoch and with a checkpoint after every step (serialising, hashing, fsync, rename),
# and the SHA-256 of one checkpoint alone (OpenSSL, through Python's hashlib: the same
# implementation wscsl links), as shares of a step. Best of three per row, ratios from one run.
# Writes the "Cost" section of docs/reliability.md.  Usage: bench/checkpoint_cost.sh [steps, 300]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
source bench/common.sh

best() {  # the best of three rates; leaves the last run in $work/last-run
  local rate=0 r
  for _ in 1 2 3; do
    r=$(steps_per_second "$work/last-run" "" "$@")
    rate=$(awk -v a="$rate" -v b="$r" 'BEGIN { print (b > a ? b : a) }')
  done
  echo "$rate"
}
plain=$(best)
every=$(best --set trainer.checkpoint_every=1)
checkpoint="$work/last-run/checkpoints/last.pt"
read -r bytes hash_ms < <(python3 - "$checkpoint" <<'PY'
import hashlib, sys, time
data = open(sys.argv[1], "rb").read()
best = min(
    (lambda t0: (hashlib.sha256(data).digest(), time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(50))
print(len(data), f"{best * 1000:.3f}")
PY
)
step_ms=$(awk -v r="$plain" 'BEGIN { printf "%.2f", 1000 / r }')
# Steps per epoch of the default pipeline: its dataset's default train_triplets / its batch size.
triplets=$(WSCSL_PLUGIN_PATH="$PWD/build/plugins" "$wscsl" describe dataset/fashion_crb |
  sed -n 's/^  train_triplets (integer, default \([0-9]*\)).*/\1/p')
batch=$(sed -n 's/^batch_size = \([0-9]*\).*/\1/p' examples/pipelines/default.toml)
epoch_steps=$(( (triplets + batch - 1) / batch ))
epoch_share=$(awk -v h="$hash_ms" -v s="$step_ms" -v n="$epoch_steps" \
  'BEGIN { printf "%.4f", 100 * h / (s * n) }')
share=$(awk -v h="$hash_ms" -v s="$step_ms" 'BEGIN { printf "%.1f", 100 * h / s }')
ratio=$(awk -v a="$every" -v b="$plain" 'BEGIN { printf "%.2f", a / b }')
section=$(cat <<MD
<!-- checkpoint-cost: written by bench/checkpoint_cost.sh $steps -->
Measured by \`bench/checkpoint_cost.sh $steps\` ($(date -u +%Y-%m-%d), 2 cores, one run): the default
pipeline's checkpoint is $((bytes / 1024)) KiB. Hashing it (SHA-256) takes $hash_ms ms, $share % of
one training step ($step_ms ms at $plain steps/s); at the default interval, one \`last\`
checkpoint per epoch of $epoch_steps steps, it is $epoch_share % of the training time. Writing a whole
checkpoint after every step (serialise, hash, fsync, rename) trains at $every steps/s, ×$ratio of
the run without checkpoints inside the epoch.
<!-- /checkpoint-cost -->
MD
)
replace_section docs/reliability.md checkpoint-cost "$section"
echo "$section"
