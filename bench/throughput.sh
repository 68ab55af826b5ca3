#!/usr/bin/env bash
# Training throughput of the default pipeline's step under a few settings, as ratios to the first
# row (one run each; this machine is shared, so compare ratios from one run, not absolute times).
# Writes docs/benchmarks.md.  Usage: bench/throughput.sh [steps per measurement, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
scripts/build.sh --target runtime >/dev/null
wscsl=build/bin/wscsl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | environment | --set arguments
configs=(
  "default (2 threads)|OMP_WAIT_POLICY=ACTIVE|"
  "1 thread|OMP_WAIT_POLICY=ACTIVE|--set trainer.threads=1"
  "2 threads, passive OpenMP waits|OMP_WAIT_POLICY=PASSIVE|--set trainer.threads=2"
  "maxpool downsampling|OMP_WAIT_POLICY=ACTIVE|--set backbone.downsample=maxpool"
  "width 32|OMP_WAIT_POLICY=ACTIVE|--set backbone.width=32"
)
measure() {  # prints steps per second
  local env_setting=$1; shift
  local dir="$work/run$RANDOM"
  env "$env_setting" "$wscsl" train examples/pipelines/default.toml --run-dir "$dir" \
    --set dataset.train_triplets=$((steps * 64)) --set trainer.epochs=1 \
    --set trainer.validate=false --set trainer.evaluate_after=false \
    --set trainer.log_every=$steps "$@" 2>&1 |
    sed -n "s|.* ${steps}/${steps} (100%) \([0-9.]*\) it/s.*|\1|p"
}
rows=""
base=""
for entry in "${configs[@]}"; do
  IFS='|' read -r name env_setting args <<<"$entry"
  # shellcheck disable=SC2086
  rate=$(measure "$env_setting" $args)
  [ -n "$base" ] || base=$rate
  ratio=$(awk -v r="$rate" -v b="$base" 'BEGIN { printf "%.2f", r / b }')
  rows+="| $name | $rate | $ratio |"$'\n'
  echo "$name: $rate steps/s (×$ratio)"
done
{
  echo "# Benchmarks"
  echo
  echo "## Training throughput (\`bench/throughput.sh $steps\`)"
  echo
  echo "Steps of 64 triplets per second on Fashion-CRB with the default pipeline, $steps steps per"
  echo "row after data loading, one run on $(nproc) cores ($(date -u +%Y-%m-%d)); the ratio is to the"
  echo "first row."
  echo
  echo "| setting | steps/s | ratio |"
  echo "|---|---:|---:|"
  printf "%s" "$rows"
} > docs/benchmarks.md
echo "wrote docs/benchmarks.md"
