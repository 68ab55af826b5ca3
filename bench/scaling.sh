#!/usr/bin/env bash
# Data-parallel scaling on this machine, in two parts, each writing its own section of
# docs/benchmarks.md:
#   throughput: steps per second of the default pipeline and of a ResNet-18 pipeline at 112 px with
#     1 process × 1 thread, 1 process × 2 threads and 2 processes × 1 thread (`--nproc 2`), all in
#     one run, as ratios to the first (needs an otherwise idle machine);
#   accuracy: the validation OT accuracy of the default pipeline trained by 1 process and by 2
#     processes with and without synchronised batch norm (`trainer.sync_batch_norm`), seeds 1–6
#     (the results do not depend on the machine's load, only the duration does).
# Usage: bench/scaling.sh [throughput|accuracy|both, default both]
#                         [steps per default-pipeline measurement, default 300]
#                         [epochs of the accuracy runs, default the pipeline's 5]
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-both}
steps=${2:-300}
accuracy_epochs=${3:-5}
case "$part" in
  throughput | accuracy | both) ;;
  *)
    echo "bench/scaling.sh: the first argument is throughput, accuracy or both, not '$part'" >&2
    exit 2
    ;;
esac
source bench/common.sh
source bench/resnet18_crb.sh

# write_section <name> <text>: replaces section <name> of docs/benchmarks.md (appended if absent).
write_section() {
  if ! grep -q "<!-- $1[: ]" docs/benchmarks.md; then
    printf "\n<!-- %s -->\n<!-- /%s -->\n" "$1" "$1" >>docs/benchmarks.md
  fi
  replace_section docs/benchmarks.md "$1" "$2"
  echo "wrote the $1 section of docs/benchmarks.md"
}

if [ "$part" != accuracy ]; then

default_rate() {  # <train arguments...>: steps/s of the default pipeline, best of three
  best_of_three steps_per_second "$work/run" "" --set trainer.batch_size=64 "$@"
}

# Fashion-CRB's images (4,000 of them) and labels, upscaled to 112 px for a ResNet-18 trunk;
# `train_triplets` are drawn from the labels.
"$wscsl" export examples/pipelines/default.toml --out "$work/crb" --set dataset.train_items=4000 \
  --set dataset.val_items=500 --set dataset.test_items=500 >/dev/null
resnet18_crb_pipeline "$work/crb" >"$work/resnet.toml"
resnet_steps=$((steps / 30 > 4 ? steps / 30 : 4))
resnet_rate() {  # <train arguments...>: steps/s of the ResNet-18 pipeline (one epoch's time)
  rm -rf "$work/resnet"
  "$wscsl" train "$work/resnet.toml" --run-dir "$work/resnet" \
    --set dataset.train_triplets=$((resnet_steps * 64)) --set trainer.epochs=1 \
    --set trainer.validate=false --set trainer.evaluate_after=false "$@" >/dev/null
  python3 - "$work/resnet/metrics.jsonl" "$resnet_steps" <<'PY'
import json, sys
print(f"{int(sys.argv[2]) / json.loads(open(sys.argv[1]).readline())['seconds']:.3f}")
PY
}

configs=(
  "1 process × 1 thread|--set trainer.threads=1"
  "1 process × 2 threads|--set trainer.threads=2"
  "2 processes × 1 thread|--set trainer.threads=1 --nproc 2"
)
rows=""
default_base="" resnet_base=""
for entry in "${configs[@]}"; do
  IFS='|' read -r name args <<<"$entry"
  # shellcheck disable=SC2086
  d=$(default_rate $args)
  # shellcheck disable=SC2086
  r=$(resnet_rate $args)
  [ -n "$default_base" ] || default_base=$d
  [ -n "$resnet_base" ] || resnet_base=$r
  rows+="| $name | $d | $(ratio "$d" "$default_base") | $r | $(ratio "$r" "$resnet_base") |"$'\n'
  echo "$name: default $d steps/s, ResNet-18 $r steps/s"
done
# The bound on 2 processes: one process taking a step of each one's share, 32 triplets.
half=$(best_of_three steps_per_second "$work/run" "" --set trainer.batch_size=32 \
  --set dataset.train_triplets=$((steps * 32)) --set trainer.threads=1)
bound=$(ratio "$half" "$default_base")
echo "1 process × 1 thread, 32 triplets a step: $half steps/s (×$bound)"
section=$(
  echo "<!-- scaling: written by bench/scaling.sh throughput $steps -->"
  echo "## Data-parallel scaling (\`bench/scaling.sh throughput $steps\`)"
  echo
  echo "Steps of 64 triplets per second (the global batch; with 2 processes each takes 32), all in"
  echo "one run on $(nproc) cores ($(date -u +%Y-%m-%d)), ratios to the first row: the default pipeline"
  echo "(best of three measurements of $steps steps) and a ResNet-18 trunk at 112 px on Fashion-CRB's"
  echo "images upscaled (\`wscsl export\`, then \`image_folder\`; one measurement of $resnet_steps steps)."
  echo "\`--nproc 2\` runs two processes that average gradients over Gloo on loopback"
  echo "(docs/distributed.md)."
  echo
  echo "| processes × threads | default steps/s | ratio | ResNet-18 112 px steps/s | ratio |"
  echo "|---|---:|---:|---:|---:|"
  printf "%s" "$rows"
  echo
  echo "Two processes each take 32 triplets a step; one process taking steps of 32 runs at"
  echo "$half steps/s (×$bound of 64), which bounds what two processes on two cores can reach on the"
  echo "default pipeline: its convolutions are so small that halving the batch does not halve a step."
  echo "The rest is the two collectives of each step (the gradient buckets, and the loss with the stop"
  echo "flag), whose latency on loopback grows while both cores compute. The ResNet-18 step is large"
  echo "enough that both costs vanish."
  echo "<!-- /scaling -->"
)
write_section scaling "$section"
fi

if [ "$part" != throughput ]; then
# Validation OT accuracy of the default pipeline (its 5 epochs, best epoch) by 1 and 2 processes.
accuracy() {  # <seed> <train arguments...>: the best validation alignment/ot_accuracy
  local seed=$1
  shift
  rm -rf "$work/acc"
  "$wscsl" train examples/pipelines/default.toml --run-dir "$work/acc" --set trainer.seed="$seed" \
    --set trainer.threads=1 --set trainer.evaluate_after=false \
    --set trainer.epochs="$accuracy_epochs" "$@" >/dev/null
  python3 - "$work/acc/metrics.jsonl" <<'PY'
import json, sys
print(f'{max(json.loads(l)["val/alignment/ot_accuracy"] for l in open(sys.argv[1])):.4f}')
PY
}
acc_rows=""
declare -A means
accuracy_configs=(
  "1 process|"
  "2 processes|--nproc 2"
  "2 processes, synchronised batch norm|--nproc 2 --set trainer.sync_batch_norm=true"
)
seeds=(1 2 3 4 5 6)
for entry in "${accuracy_configs[@]}"; do
  IFS='|' read -r name args <<<"$entry"
  values=()
  for seed in "${seeds[@]}"; do
    # shellcheck disable=SC2086
    values+=("$(accuracy "$seed" $args)")
  done
  means[$name]=$(printf "%s\n" "${values[@]}" | awk '{ s += $1 } END { printf "%.4f", s / NR }')
  lowest=$(printf "%s\n" "${values[@]}" | sort -n | head -1)
  acc_rows+="| $name | $(printf "%s / " "${values[@]}" | sed 's| / $||') | ${means[$name]} | $lowest |"$'\n'
  echo "$name: OT accuracy ${values[*]} (mean ${means[$name]})"
done
difference() {  # <name>: its mean minus one process's
  awk -v a="${means[$1]}" -v b="${means[1 process]}" 'BEGIN { printf "%+.4f", a - b }'
}
section=$(
  echo "<!-- scaling-accuracy: written by bench/scaling.sh accuracy $steps $accuracy_epochs -->"
  echo "### Validation accuracy of data-parallel training (\`bench/scaling.sh accuracy $steps $accuracy_epochs\`)"
  echo
  echo "Validation OT accuracy of the default pipeline (best of $accuracy_epochs epochs) trained by one and by"
  echo "two processes with the same global batch of 64, seeds ${seeds[*]}; with two processes each"
  echo "batch norm normalises by its own 32 triplets, or, synchronised, by all 64 as one process does:"
  echo
  echo "| trained by | seeds $(printf "%s / " "${seeds[@]}" | sed 's| / $||') | mean | lowest |"
  echo "|---|---|---:|---:|"
  printf "%s" "$acc_rows"
  echo
  echo "Means minus one process's: two processes $(difference "2 processes"), synchronised"
  echo "$(difference "2 processes, synchronised batch norm")."
  echo "<!-- /scaling-accuracy -->"
)
write_section scaling-accuracy "$section"
fi
