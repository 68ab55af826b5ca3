#!/usr/bin/env bash
# The cost of an outfit evaluation against training, on the embedded outfit benchmark: the type-aware
# pipeline (examples/pipelines/outfits/type_aware.toml) trains one epoch without validation, then
# `wscsl eval` evaluates its checkpoint on the test split (decoding the split's images, embedding
# every item once, scoring every pair of every compatibility line and every question × candidate
# pair, writing the per-line and per-question files and the picture). Both on one thread, in one
# run; the ratio is what carries over. Writes its section of docs/benchmarks.md.
# Usage: bench/outfit_evaluation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
pipeline=examples/pipelines/outfits/type_aware.toml

"$wscsl" train "$pipeline" --run-dir "$work/run" --set trainer.epochs=1 \
  --set trainer.validate=false --set trainer.evaluate_after=false >/dev/null
epoch=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["seconds"])' \
  "$work/run/metrics.jsonl")
best=""
for _ in 1 2 3; do
  start=$(date +%s.%N)
  "$wscsl" eval "$work/run" >/dev/null
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
  best=$(awk -v a="${best:-$seconds}" -v b="$seconds" 'BEGIN { print (b < a ? b : a) }')
done
lines=$(grep -c . runs/data/fashion-outfits/nondisjoint/compatibility_test.txt)
questions=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' \
  runs/data/fashion-outfits/nondisjoint/fill_in_blank_test.json)
epochs=$(sed -n 's/^epochs = \([0-9]*\).*/\1/p' "$pipeline")
share=$(awk -v e="$best" -v t="$epoch" 'BEGIN { printf "%.3f", e / t }')
share_run=$(awk -v e="$best" -v t="$epoch" -v n="$epochs" 'BEGIN { printf "%.1f", 100 * e / (t * n) }')
echo "one training epoch: $epoch s; evaluation of the test split: $best s (×$share of an epoch)"

section=$(
  echo "<!-- outfit-evaluation: written by bench/outfit_evaluation.sh -->"
  echo "## Outfit evaluation against training (\`bench/outfit_evaluation.sh\`)"
  echo
  echo "The type-aware pipeline on the embedded outfit benchmark (medium, nondisjoint), one thread,"
  echo "$(date -u +%Y-%m-%d), $(nproc) cores: one training epoch against \`wscsl eval\` of the test split"
  echo "($lines compatibility lines, $questions fill-in-the-blank questions; best of three), which"
  echo "loads and decodes the split, embeds every item once, scores all item pairs of the lines and"
  echo "all question × candidate pairs in batches, and writes the per-line and per-question files and"
  echo "the picture."
  echo
  echo "| one training epoch | test evaluation | evaluation / epoch | evaluation / the pipeline's $epochs epochs |"
  echo "|---:|---:|---:|---:|"
  echo "| $(printf "%.1f" "$epoch") s | $(printf "%.2f" "$best") s | $share | $share_run % |"
  echo "<!-- /outfit-evaluation -->"
)
if ! grep -q "<!-- outfit-evaluation[: ]" docs/benchmarks.md; then
  printf "\n<!-- outfit-evaluation -->\n<!-- /outfit-evaluation -->\n" >>docs/benchmarks.md
fi
replace_section docs/benchmarks.md outfit-evaluation "$section"
echo "wrote docs/benchmarks.md"
