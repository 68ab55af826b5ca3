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
source bench/rounds.sh
export_pixels

rate() {  # <name> <threads>
  case $1 in
    wscsl) steps_per_second "$work/run" "" --set trainer.threads="$2" ;;
    baseline) wscsl=$BASELINE steps_per_second "$work/run" "" --set trainer.threads="$2" ;;
    eager) pytorch_rate "$2" ;;
  esac
}

take_rounds thread threads rate $([ -z "${BASELINE:-}" ] || echo baseline) wscsl eager
