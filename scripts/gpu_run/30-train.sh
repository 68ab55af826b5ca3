# shellcheck shell=bash
# Phase 3: training on the device, the default pipeline and a ResNet-18 outfit pipeline.
# Sourced by scripts/gpu_run.sh after the phases numbered before it.
# sample_gpu <file>: while it runs, every second, the GPU's memory in use and utilisation, and its
# compute processes (a container may not show them: its processes live in another PID namespace).
sample_gpu() {
  while :; do
    echo "gpu: $(nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader,nounits 2>&1 | head -n 1)" >>"$1"
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader >>"$1" 2>&1
    sleep 1
  done
}
# device_checks <name> <run dir> <train log>: the run recorded and announced the expected device,
# and nothing of it stopped on another one.
device_checks() {
  local name=$1 run=$2 log=$3 recorded
  recorded=$(toml_value "$run/resolved.toml" provenance device 2>/dev/null | tr -d '"')
  if [[ "$recorded" == "$device"* ]]; then
    check PASS "$name: [provenance] device" "$recorded"
  else
    check FAIL "$name: [provenance] device" "'$recorded', expected $device"
  fi
  if grep -q "^run .* device $device" "$logs/$log"; then
    check PASS "$name: run line" "$(grep -m1 "^run .* device" "$logs/$log")"
  else
    check FAIL "$name: run line" "no 'run … device $device' line in $log"
  fi
  if grep -q 'holds its \(parameter\|buffer\)\|the training batch.s .* are on' "$logs/$log"; then
    check FAIL "$name: every parameter, buffer and batch on $device" "$(grep -m1 'holds its\|training batch' "$logs/$log")"
  else
    check PASS "$name: every parameter, buffer and batch on $device" "the trainer's device check passed"
  fi
}
# gpu_process_check <name> <samples file>: nvidia-smi saw wscsl on the GPU, or the GPU's memory in
# use rise by 100 MiB or more over what it was before (cuda); N/A on the CPU.
gpu_process_check() {
  if [ "$device" = cuda ]; then
    local base peak
    base=$(sed -n 's/^gpu: *\([0-9]*\),.*/\1/p' "$2" 2>/dev/null | head -n 1)
    peak=$(sed -n 's/^gpu: *\([0-9]*\),.*/\1/p' "$2" 2>/dev/null | sort -n | tail -n 1)
    if grep -q 'wscsl' "$2" 2>/dev/null; then
      check PASS "$1: wscsl is a GPU process" "$(grep -m1 wscsl "$2"); GPU memory ${base:-?} → ${peak:-?} MiB"
    elif [ -n "$base" ] && [ -n "$peak" ] && [ $((peak - base)) -ge 100 ]; then
      check PASS "$1: wscsl is a GPU process" "GPU memory in use ${base} → ${peak} MiB while it ran (nvidia-smi lists no process here)"
    else
      check FAIL "$1: wscsl is a GPU process" "nvidia-smi never listed it, GPU memory ${base:-?} → ${peak:-?} MiB"
    fi
  else
    check N/A "$1: wscsl is a GPU process" "--device cpu: the provenance and run line above say cpu"
  fi
}
# train_eval_embed <name> <pipeline> <stop after> <arguments...>: train, stopped after some steps,
# resume to the end, eval and embed the test split, all on the device.
train_eval_embed() {
  local name=$1 pipeline=$2 stop=$3
  shift 3
  local run="$work/runs/$name" st=0 sampler="" samples="$logs/$name-nvidia-smi.log"
  if [ "$device" = cuda ]; then
    echo "gpu: $(nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader,nounits 2>&1 | head -n 1)" >"$samples"
    sample_gpu "$samples" &
    sampler=$!
  fi
  run_logged "$name-train.log" "$(limit 120)" "$wscsl" train "$pipeline" --run-dir "$run" \
    --set trainer.device="$device" "$@" --stop-after-steps "$stop" || st=$?
  expect "$name: train stops after $stop steps" grep -q "stopped after step $stop" "$logs/$name-train.log"
  [ $st = 0 ] || note_failure "$name-train.log"
  if [ -f "$run/resolved.toml" ]; then
    device_checks "$name" "$run" "$name-train.log"
    cp "$run/resolved.toml" "$logs/$name-resolved.toml"
  fi
  if [ $st = 0 ]; then
    run_logged "$name-resume.log" "$(limit 150)" "$wscsl" train --resume "$run" || st=$?
    [ $st = 0 ] || note_failure "$name-resume.log"
    expect "$name: resumed to the end, test results written" test -f "$run/results.json"
    device_checks "$name (resumed)" "$run" "$name-resume.log"
  fi
  if [ $st = 0 ]; then
    run_logged "$name-eval.log" "$(limit 90)" "$wscsl" eval "$run" || st=$?
    [ $st = 0 ] || note_failure "$name-eval.log"
  fi
  if [ $st = 0 ]; then
    run_logged "$name-embed.log" "$(limit 90)" "$wscsl" embed "$run" --split test || st=$?
    [ $st = 0 ] || note_failure "$name-embed.log"
    expect "$name: embed wrote .npy files" compgen -G "$run/embeddings/*test*.npy"
  fi
  [ -z "$sampler" ] || { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; }
  gpu_process_check "$name" "$samples"
  return $st
}

if ! skip_if_late train-default 30; then
  begin train-default "examples/pipelines/default.toml on $device: train, resume, eval, embed"
  train_eval_embed default examples/pipelines/default.toml $((train_steps * 3 / 2)) \
    --set dataset.train_triplets=$((train_steps * 64)) --set trainer.epochs=2 \
    --set trainer.log_every="$train_steps" --set dataset.val_items=1000 \
    --set dataset.val_triplets=2000 --set dataset.test_items=1000 --set dataset.test_triplets=2000
  st=$?
  end "$(status_word $st)" "$train_steps steps an epoch, 2 epochs, stopped after $((train_steps * 3 / 2)) and resumed"
fi

if ! skip_if_late train-resnet-outfits 45; then
  begin train-resnet-outfits "paper/polyvore_outfits/sce_net.toml (ResNet-18 at 112 px, random init) on the tiny embedded outfit benchmark"
  outfit_args=(--set dataset.root="$work/outfits" --set dataset.generate=tiny
    --set 'backbone.weights=""' --set dataset.cache_dir="$work/cache" --set trainer.epochs=2)
  if [ "$quick" = 1 ]; then
    # As cli.paper_pipelines trains it alone on a CPU: the training outfits' tops and shoes only,
    # three steps of 64, one epoch.
    outfit_args+=(--set 'dataset.held_out_types=["accessories", "all-body", "bags", "bottoms", "hats", "jewellery", "outerwear", "scarves", "sunglasses"]'
      --set trainer.batch_size=64 --set trainer.threads=2 --set trainer.epochs=1)
  fi
  train_eval_embed resnet-outfits examples/pipelines/paper/polyvore_outfits/sce_net.toml 2 \
    "${outfit_args[@]}"
  st=$?
  end "$(status_word $st)" "text encoders (precomputed_text), SCE-Net's masks, five losses"
fi
