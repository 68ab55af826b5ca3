#!/usr/bin/env bash
# What TensorBoard's event files cost a training step: the default pipeline with them off, with
# the training scalars every 100 steps (trainer.log_every's default) and at every step, as ratios
# to the first row, all from one run (the best of three measurements per row, taken in turns).
# Writes its section of docs/benchmarks.md.  Usage: bench/tensorboard_overhead.sh [steps, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
source bench/common.sh

# name | --set arguments (log_every: common.sh's progress line needs one at the last step)
configs=(
  "event files off|--set trainer.tensorboard=false --set trainer.log_every=$steps"
  "training scalars every 100 steps|--set trainer.log_every=100"
  "training scalars at every step|--set trainer.log_every=1"
)
# Round-robin over the settings, three rounds, the best of each: a machine whose load drifts
# during the run then weighs on every row alike.
declare -A best
for _ in 1 2 3; do
  for entry in "${configs[@]}"; do
    IFS='|' read -r name args <<<"$entry"
    # shellcheck disable=SC2086
    rate=$(steps_per_second "$work/run" "" $args)
    best[$name]=$(awk -v a="${best[$name]:-0}" -v b="$rate" 'BEGIN { print (b > a ? b : a) }')
  done
done
rows=""
base=""
for entry in "${configs[@]}"; do
  IFS='|' read -r name _ <<<"$entry"
  rate=${best[$name]}
  [ -n "$base" ] || base=$rate
  ratio=$(ratio "$rate" "$base")
  rows+="| $name | $rate | $ratio |"$'\n'
  echo "$name: $rate steps/s (×$ratio)"
done
section=$(
  echo "<!-- tensorboard: written by bench/tensorboard_overhead.sh $steps -->"
  echo "## TensorBoard's event files (\`bench/tensorboard_overhead.sh $steps\`)"
  echo
  echo "Steps of 64 triplets per second on Fashion-CRB with the default pipeline (one thread), the"
  echo "best of three measurements of $steps steps per row, taken in turns, all in one run on $(nproc) cores"
  echo "($(date -u +%Y-%m-%d)); the ratio is to the first row. Every step reports its loss terms"
  echo "whether or not they are logged; a logged step adds one event of a few hundred bytes."
  echo
  echo "| setting | steps/s | ratio |"
  echo "|---|---:|---:|"
  printf "%s" "$rows"
  echo "<!-- /tensorboard -->"
)
replace_section docs/benchmarks.md tensorboard "$section"
echo "wrote docs/benchmarks.md"
