#!/usr/bin/env bash
# The cost of methods written in Python: the default pipeline's training step with its convnet,
# its DiscoverNet-Set module or both replaced by equivalent TorchScript modules
# (bench/torchscript_equivalents.py, Debian's python3-torch), as ratios to the native plugins,
# all from one run of this script (the best of three measurements per row).
# Writes its section of docs/benchmarks.md.  Usage: bench/torchscript_overhead.sh [steps, 300]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
source bench/common.sh
python=${WSCSL_PYTHON:-/usr/bin/python3}
"$python" bench/torchscript_equivalents.py "$work/scripts" examples/pipelines/default.toml

# name | pipeline
configs=(
  "native convnet + DiscoverNet-Set|examples/pipelines/default.toml"
  "scripted backbone|$work/scripts/scripted_backbone.toml"
  "scripted condition module|$work/scripts/scripted_module.toml"
  "both scripted|$work/scripts/scripted_both.toml"
)
rows=""
base=""
for entry in "${configs[@]}"; do
  IFS='|' read -r name pipeline <<<"$entry"
  rate=$(best_of_three steps_per_second "$work/run" "")
  [ -n "$base" ] || base=$rate
  ratio=$(ratio "$rate" "$base")
  rows+="| $name | $rate | $ratio |"$'\n'
  echo "$name: $rate steps/s (×$ratio)"
done
section=$(
  echo "<!-- torchscript: written by bench/torchscript_overhead.sh $steps -->"
  echo "## Methods written in Python (\`bench/torchscript_overhead.sh $steps\`)"
  echo
  echo "The default pipeline's training step (one thread) with its native \`convnet\` and"
  echo "\`discovernet\` plugins replaced by equivalent TorchScript modules scripted from Python"
  echo "(\`backbone/torchscript\`, \`condition_module/torchscript\`; the same layers, the set module's g"
  echo "and anchors untrained as in the native default): steps of 64 triplets per second, the best of"
  echo "three measurements of $steps steps per row, one run on $(nproc) cores ($(date -u +%Y-%m-%d)); the"
  echo "ratio is to the native row. The target is at least 0.8×."
  echo
  echo "| pipeline | steps/s | ratio |"
  echo "|---|---:|---:|"
  printf "%s" "$rows"
  echo "<!-- /torchscript -->"
)
replace_section docs/benchmarks.md torchscript "$section"
echo "wrote the torchscript section of docs/benchmarks.md"
