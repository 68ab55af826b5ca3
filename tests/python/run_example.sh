#!/usr/bin/env bash
# examples/python end to end: script the Python condition module, train the example pipeline with
# it on a small Fashion-CRB, read the run back in Python (embeddings and exported weights).
# Usage: run_example.sh WSCSL PYTHON OUT_DIR   (WSCSL_PLUGIN_PATH set by ctest)
set -euo pipefail
wscsl=$1 python=$2 out=$3
examples="$(cd "$(dirname "$0")/../../examples/python" && pwd)"
rm -rf "$out"
mkdir -p "$out"
"$python" "$examples/make_method.py" "$out/gated.pt"
"$wscsl" check "$examples/gated_projections.toml" --set condition_module.file="$out/gated.pt"
"$wscsl" train "$examples/gated_projections.toml" --run-dir "$out/run" \
  --set condition_module.file="$out/gated.pt" --set trainer.epochs=1 \
  --set dataset.train_items=512 --set dataset.val_items=256 --set dataset.test_items=256 \
  --set dataset.train_triplets=1000 --set dataset.val_triplets=300 \
  --set dataset.test_triplets=300
"$wscsl" embed "$out/run" --split test
"$wscsl" export-weights "$out/run" --out "$out/run/weights.pt"
"$python" "$examples/inspect_run.py" "$out/run" | tee "$out/inspect.txt"
test "$(grep -c '^psi_[1-4]: most separates ' "$out/inspect.txt")" -eq 4
test -s "$out/run/embeddings.png"
# A text encoder written in Python (make_text_model.py) as type-aware's title branch.
"$python" "$examples/make_text_model.py" "$out/trigram_bag.pt"
"$wscsl" check "$examples/title_model.toml" --set text_encoders.0.file="$out/trigram_bag.pt" \
  --set dataset.root="$out/outfits"
"$wscsl" train "$examples/title_model.toml" --run-dir "$out/title_run" \
  --set text_encoders.0.file="$out/trigram_bag.pt" --set dataset.root="$out/outfits" \
  --set trainer.epochs=1 | tee "$out/title_train.txt"
grep -q "Fill in the blank on 'test'" "$out/title_train.txt"
