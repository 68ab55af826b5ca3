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
source bench/rounds.sh
export_pixels

rate() {  # <name> <processes>
  case $1 in
    wscsl) steps_per_second "$work/run" "" --set trainer.threads=1 --nproc "$2" ;;
    ddp) pytorch_rate 1 --nproc "$2" ;;
  esac
}

take_rounds process processes rate wscsl ddp
