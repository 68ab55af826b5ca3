#!/usr/bin/env bash
# A run's TensorBoard event files, read by an independent decoder (read_events.py): a whole run
# logs every scalar, picture and hyperparameter once; a run killed inside a checkpoint after it
# had logged its step, then resumed, logs exactly what the whole run logged (no step twice);
# with two processes only rank 0 writes, and the loss terms are the whole batch's;
# trainer.tensorboard = false writes none.
# Usage: run_and_read.sh WSCSL PYTHON PROTO_DIR OUT_DIR   (WSCSL_PLUGIN_PATH set by ctest)
set -euo pipefail
wscsl=$1 python=$2 proto=$3 out=$4
root="$(cd "$(dirname "$0")/../.." && pwd)"
read_events=("$python" "$root/tests/tensorboard/read_events.py" "$proto")
rm -rf "$out"
mkdir -p "$out"
pipeline="$root/examples/pipelines/default.toml"
# 2 epochs of 5 steps, a checkpoint and the training scalars at every step; on the CPU, which alone
# promises that the resumed run logs the whole run's very values (and two processes would need two
# GPUs).
small=(--set dataset.train_items=256 --set dataset.val_items=96 --set dataset.test_items=96
  --set dataset.train_triplets=320 --set dataset.val_triplets=64 --set dataset.test_triplets=64
  --set trainer.epochs=2 --set trainer.threads=1 --set trainer.log_every=1
  --set trainer.checkpoint_every=1 --set trainer.device=cpu)
# With an evaluator that draws: its picture is logged beside curves.png.
{
  cat "$pipeline"
  printf '\n[[evaluators]]\ntype = "embedding_plot"\nprojection = "pca"\npoints = 50\n'
} >"$out/drawn.toml"
"$wscsl" train "$out/drawn.toml" --run-dir "$out/drawn" "${small[@]}" >"$out/drawn.log"
"${read_events[@]}" check "$out/drawn" --steps 10 --epochs 2 --log-every 1 --pictures 2

"$wscsl" train "$pipeline" --run-dir "$out/whole" "${small[@]}" >"$out/whole.log"
"${read_events[@]}" check "$out/whole" --steps 10 --epochs 2 --log-every 1 --only-term margin/margin

# Killed while committing step 5's checkpoint: step 5 is in the event file, the checkpoint it
# resumes from is step 4's.
status=0
WSCSL_FAULT_AT=checkpoint.after_rotate:5 "$wscsl" train "$pipeline" --run-dir "$out/killed" \
  "${small[@]}" >"$out/killed.log" 2>&1 || status=$?
[ "$status" -eq 137 ] || { echo "the killed run ended with $status, not SIGKILL" >&2; exit 1; }
"$wscsl" train --resume "$out/killed" >>"$out/killed.log"
"${read_events[@]}" check "$out/killed" --steps 10 --epochs 2 --log-every 1
"${read_events[@]}" same "$out/whole" "$out/killed"

"$wscsl" train "$pipeline" --run-dir "$out/two" "${small[@]}" --set trainer.log_every=2 \
  --nproc 2 >"$out/two.log"
"${read_events[@]}" check "$out/two" --steps 10 --epochs 2 --log-every 2 --only-term margin/margin

"$wscsl" train "$pipeline" --run-dir "$out/off" "${small[@]}" --set trainer.tensorboard=false \
  >"$out/off.log"
"${read_events[@]}" none "$out/off"
