#!/usr/bin/env bash
# The cost of an outfit evaluation against training, on the embedded outfit benchmark: each of the
# Siamese, type-aware, SCE-Net and SCE-Net "average" pipelines (examples/pipelines/outfits/)
# trains one epoch without validation, then `wscsl eval` evaluates its checkpoint on the test split
# (decoding the split's images, embedding every item once, scoring every pair of every
# compatibility line and every question × candidate pair, writing the per-line and per-question
# files and the picture). All on one thread, in one run; the ratios are what carries over. Writes its section of docs/benchmarks.md.
# Usage: bench/outfit_evaluation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
# measure <pipeline>: "<epoch seconds> <best evaluation seconds>" of the pipeline.
measure() {
  rm -rf "$work/run"
  "$wscsl" train "$1" --run-dir "$work/run" --set trainer.epochs=1 \
    --set trainer.validate=false --set trainer.evaluate_after=false >/dev/null
  local epoch best="" seconds start
  epoch=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["seconds"])' \
    "$work/run/metrics.jsonl")
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$wscsl" eval "$work/run" >/dev/null
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
    best=$(awk -v a="${best:-$seconds}" -v b="$seconds" 'BEGIN { print (b < a ? b : a) }')
  done
  echo "$epoch $best"
}

rows=""
declare -A evaluation
for name in siamese type_aware sce_net sce_net_average; do
  pipeline=examples/pipelines/outfits/$name.toml
  read -r epoch best <<<"$(measure "$pipeline")"
  evaluation[$name]=$best
  epochs=$(sed -n 's/^epochs = \([0-9]*\).*/\1/p' "$pipeline")
  share=$(awk -v e="$best" -v t="$epoch" 'BEGIN { printf "%.3f", e / t }')
  share_run=$(awk -v e="$best" -v t="$epoch" -v n="$epochs" 'BEGIN { printf "%.1f", 100 * e / (t * n) }')
  rows+="| \`$name.toml\` | $(printf "%.1f" "$epoch") s | $(printf "%.2f" "$best") s | $share | $share_run % |"$'\n'
  echo "$name: one training epoch $epoch s; evaluation of the test split $best s (×$share of an epoch)"
done
# SCE-Net and its "average" variant differ only in the condition weights: the branch run on every
# pair of every line and question, against equal weights.
branch_share=$(awk -v s="${evaluation[sce_net]}" -v b="${evaluation[sce_net_average]}" \
  'BEGIN { printf "%.1f", 100 * (s - b) / s }')
lines=$(grep -c . runs/data/fashion-outfits/nondisjoint/compatibility_test.txt)
questions=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' \
  runs/data/fashion-outfits/nondisjoint/fill_in_blank_test.json)

section=$(
  echo "<!-- outfit-evaluation: written by bench/outfit_evaluation.sh -->"
  echo "## Outfit evaluation against training (\`bench/outfit_evaluation.sh\`)"
  echo
  echo "The outfit pipelines on the embedded outfit benchmark (medium, nondisjoint), one thread,"
  echo "$(date -u +%Y-%m-%d), $(nproc) cores: one training epoch against \`wscsl eval\` of the test split"
  echo "($lines compatibility lines, $questions fill-in-the-blank questions; best of three), which"
  echo "loads and decodes the split, embeds every item once, scores all item pairs of the lines and"
  echo "all question × candidate pairs in batches, and writes the per-line and per-question files and"
  echo "the picture."
  echo
  echo "| pipeline | one training epoch | test evaluation | evaluation / epoch | evaluation / the pipeline's epochs |"
  echo "|---|---:|---:|---:|---:|"
  printf "%s" "$rows"
  echo
  echo "SCE-Net's pair weight branch reads both items of every scored pair, so its scoring grows"
  echo "with the square of an outfit's size; batched over all pairs of the split it is"
  echo "$branch_share % of SCE-Net's evaluation (its evaluation minus that of \`sce_net_average.toml\`,"
  echo "the same pipeline with equal condition weights instead of the branch)."
  echo "<!-- /outfit-evaluation -->"
)
if ! grep -q "<!-- outfit-evaluation[: ]" docs/benchmarks.md; then
  printf "\n<!-- outfit-evaluation -->\n<!-- /outfit-evaluation -->\n" >>docs/benchmarks.md
fi
replace_section docs/benchmarks.md outfit-evaluation "$section"
echo "wrote docs/benchmarks.md"
