#!/usr/bin/env bash
# Data-parallel scaling beside PyTorch's DistributedDataParallel: the default pipeline trained by
# 1 process and by 2 (`--nproc 2`, DDP's Reducer over Gloo), each process on one thread, and
# PyTorch in Python (Debian's python3-torch, the same LibTorch 1.13) training the same net on the
# same pixels alone and as a 2-process DDP job over Gloo (bench/eager_reference.py --nproc 2).
# The rows are taken in turn — wscsl 1, wscsl 2, DDP 1, DDP 2 — for several rounds, and each row's
# median is printed with the ratio of 2 processes to 1, so that a machine whose speed drifts moves
# all rows alike; the load average before each round is printed beside it (on a shared machine
# say so beside the numbers). Prints the rows; writes nothing.
# Usage: bench/ddp.sh [steps per measurement, default 200] [rounds, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-200}
rounds=${2:-5}
source bench/common.sh

# Fashion-CRB's pixels and training triplets for PyTorch (docs/datasets.md, `wscsl export`).
"$wscsl" export examples/pipelines/default.toml --out "$work/crb" --set dataset.train_items=4000 \
  --set dataset.val_items=200 --set dataset.test_items=200 \
  --set dataset.train_triplets=$((steps * 64)) >/dev/null

wscsl_rate() {  # <processes>
  steps_per_second "$work/run" "" --set trainer.threads=1 --nproc "$1"
}
ddp_rate() {  # <processes>
  /usr/bin/python3 bench/eager_reference.py "$work/crb" --model default --device cpu \
    --threads 1 --nproc "$1" --steps "$steps" |
    python3 -c 'import json, sys; print(json.loads(sys.stdin.readlines()[-1])["steps_per_s"])'
}

rows=("wscsl|1" "wscsl|2" "ddp|1" "ddp|2")
declare -A rates
for round in $(seq "$rounds"); do
  echo "round $round: load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for row in "${rows[@]}"; do
    IFS='|' read -r who processes <<<"$row"
    case $who in
      wscsl) rate=$(wscsl_rate "$processes") ;;
      ddp) rate=$(ddp_rate "$processes") ;;
    esac
    rates[$row]="${rates[$row]:-} $rate"
    echo "round $round: $who, $processes process(es): $rate steps/s"
  done
done
echo "after the rounds: load average $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo
echo "| implementation | 1 process (steps/s) | 2 processes (steps/s) | 2 ÷ 1 |"
echo "|---|---:|---:|---:|"
for who in wscsl ddp; do
  one=$(median <<<"${rates[$who|1]}")
  two=$(median <<<"${rates[$who|2]}")
  echo "| $who | $one | $two | $(ratio "$two" "$one") |"
done
