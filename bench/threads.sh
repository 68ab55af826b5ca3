#!/usr/bin/env bash
# One thread against two on the default pipeline, beside PyTorch eager in Python (Debian's
# python3-torch, the same LibTorch) training the same net on the same pixels on as many threads
# (bench/eager_reference.py). The rows are taken in turn — wscsl 1, wscsl 2, eager 1, eager 2 —
# for several rounds, and each row's median is printed with the ratio of two threads to one, so
# that a machine whose speed drifts moves both threads' rows alike. BASELINE=<another wscsl
# binary> adds its two rows (e.g. one built from an earlier commit) to the same rounds.
# On a machine other people use, a busy core stalls every two-thread row (docs/benchmarks.md):
# compare ratios taken on an idle machine. Prints the rows; writes nothing.
# Usage: bench/threads.sh [steps per measurement, default 300] [rounds, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
rounds=${2:-5}
source bench/common.sh

# Fashion-CRB's pixels and training triplets for PyTorch (docs/datasets.md, `wscsl export`).
"$wscsl" export examples/pipelines/default.toml --out "$work/crb" --set dataset.train_items=4000 \
  --set dataset.val_items=200 --set dataset.test_items=200 \
  --set dataset.train_triplets=$((steps * 64)) >/dev/null

wscsl_rate() {  # <binary> <threads>
  wscsl=$1 steps_per_second "$work/run" "" --set trainer.threads="$2"
}
eager_rate() {  # <threads>
  /usr/bin/python3 bench/eager_reference.py "$work/crb" --model default --device cpu \
    --threads "$1" --steps "$steps" | python3 -c 'import json, sys; print(json.loads(sys.stdin.readlines()[-1])["steps_per_s"])'
}

rows=("wscsl|1" "wscsl|2" "eager|1" "eager|2")
[ -z "${BASELINE:-}" ] || rows=("baseline|1" "baseline|2" "${rows[@]}")
declare -A rates
for round in $(seq "$rounds"); do
  for row in "${rows[@]}"; do
    IFS='|' read -r who threads <<<"$row"
    case $who in
      wscsl) rate=$(wscsl_rate build/bin/wscsl "$threads") ;;
      baseline) rate=$(wscsl_rate "$BASELINE" "$threads") ;;
      eager) rate=$(eager_rate "$threads") ;;
    esac
    rates[$row]="${rates[$row]:-} $rate"
    echo "round $round: $who, $threads thread(s): $rate steps/s"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo
echo "| implementation | 1 thread (steps/s) | 2 threads (steps/s) | 2 ÷ 1 |"
echo "|---|---:|---:|---:|"
for who in $([ -z "${BASELINE:-}" ] || echo baseline) wscsl eager; do
  one=$(median <<<"${rates[$who|1]}")
  two=$(median <<<"${rates[$who|2]}")
  echo "| $who | $one | $two | $(ratio "$two" "$one") |"
done
