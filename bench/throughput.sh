#!/usr/bin/env bash
# Training throughput of the default pipeline's step under a few settings, as ratios to the first
# row, all from one run of this script (the best of three measurements per row: this machine is
# shared, so compare ratios from one run, not absolute times).
# Writes its section of docs/benchmarks.md.  Usage: bench/throughput.sh [steps per measurement, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
source bench/common.sh

# name | environment | --set arguments | "busy" to keep one core busy with another process meanwhile
configs=(
  "default pipeline (1 thread)|||"
  "2 threads|||--set trainer.threads=2"
  "2 threads, passive OpenMP waits|OMP_WAIT_POLICY=PASSIVE|--set trainer.threads=2|"
  "1 thread, one core busy elsewhere|||busy"
  "2 threads, one core busy elsewhere||--set trainer.threads=2|busy"
  "2 threads, passive waits, one core busy elsewhere|OMP_WAIT_POLICY=PASSIVE|--set trainer.threads=2|busy"
  "max-pooling instead of strided stages||--set backbone.downsample=maxpool|"
  "width 32||--set backbone.width=32|"
)
measure() {  # prints steps per second
  local env_setting=$1; shift  # may be empty
  steps_per_second "$work/run" "$env_setting" "$@"
}
rows=""
base=""
for entry in "${configs[@]}"; do
  IFS='|' read -r name env_setting args busy <<<"$entry"
  busy_pid=""
  if [ "$busy" = busy ]; then
    sh -c 'while :; do :; done' &
    busy_pid=$!
  fi
  # shellcheck disable=SC2086
  rate=$(best_of_three measure "$env_setting" $args)
  [ -z "$busy_pid" ] || kill "$busy_pid"
  [ -n "$base" ] || base=$rate
  ratio=$(ratio "$rate" "$base")
  rows+="| $name | $rate | $ratio |"$'\n'
  echo "$name: $rate steps/s (×$ratio)"
done
section=$(
  echo "<!-- throughput: written by bench/throughput.sh $steps -->"
  echo "## Training throughput (\`bench/throughput.sh $steps\`)"
  echo
  echo "Steps of 64 triplets per second on Fashion-CRB with the default pipeline: the best of three"
  echo "measurements of $steps steps per row, all in one run on $(nproc) cores ($(date -u +%Y-%m-%d));"
  echo "the ratio is to the first row."
  echo
  echo "With one thread a step never waits for another core; with two, every parallel region waits"
  echo "for both threads, so a core busy with another process stalls each step (OpenMP's default"
  echo "active waiting makes it far worse; passive waiting costs speed on an idle machine). The"
  echo 'default pipeline therefore trains on one thread; `trainer.threads = 0` uses every core. On'
  echo 'this shared virtual machine the two-thread rows vary from run to run (between about 1.0× and'
  echo '1.6× of one thread when idle); the one-thread rows are stable.'
  echo
  echo "| setting | steps/s | ratio |"
  echo "|---|---:|---:|"
  printf "%s" "$rows"
  echo "<!-- /throughput -->"
)
replace_section docs/benchmarks.md throughput "$section"
echo "wrote docs/benchmarks.md"
