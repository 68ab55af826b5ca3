# shellcheck shell=bash
# Phase 5: NCCL.
# Sourced by scripts/gpu_run.sh after the phases numbered before it.
if ! skip_if_late nccl 20; then
  begin nccl "train with trainer.collective_backend = \"nccl\" (--nproc 1), the communicator's NCCL tests"
  st=0
  run_logged nccl-train.log "$(limit 90)" "$wscsl" train examples/pipelines/default.toml \
    --run-dir "$work/runs/nccl" --nproc 1 --set trainer.device="$device" \
    --set trainer.collective_backend=nccl --set dataset.train_triplets=$((nccl_steps * 64)) \
    --set trainer.epochs=1 --set trainer.validate=false --set trainer.evaluate_after=false
  train_st=$?
  if [ "$device" = cuda ]; then
    [ $train_st = 0 ] || { st=$train_st; note_failure nccl-train.log; }
    expect "nccl: one process trains with collective_backend = \"nccl\"" test $train_st = 0
    [ ! -f "$work/runs/nccl/resolved.toml" ] || device_checks nccl "$work/runs/nccl" nccl-train.log
  else
    # On the CPU "nccl" is refused before anything runs, with one sentence.
    if [ $train_st = 2 ] && grep -q "'collective_backend': \"nccl\"" "$logs/nccl-train.log"; then
      check PASS "nccl: refused on the CPU with one sentence" "$(grep -m1 'error:' "$logs/nccl-train.log" | cut -c1-200)"
    else
      check FAIL "nccl: refused on the CPU with one sentence" "exit $train_st"
      st=1
    fi
  fi
  if [ -x "$build/bin/host_tests" ]; then
    run_logged nccl-communicator.log "$(limit 120)" "$build/bin/host_tests" --gtest_filter='Communicator.*'
    comm_st=$?
    [ $comm_st = 0 ] || { st=$comm_st; note_failure nccl-communicator.log; }
    expect "nccl: the communicator's tests pass" test $comm_st = 0
    if [ "$device" = cuda ]; then
      # GoogleTest prints "[       OK ]" for a test that ran and passed, "[  SKIPPED ]" otherwise.
      if grep -q 'OK \] Communicator.NcclReducesTensorsOnTheGpus' "$logs/nccl-communicator.log"; then
        check PASS "nccl: NCCL's collectives ran on the GPU" "Communicator.NcclReducesTensorsOnTheGpus"
      else
        check FAIL "nccl: NCCL's collectives ran on the GPU" "$(grep -m1 'NcclReducesTensorsOnTheGpus\|Skipped\|skipped' "$logs/nccl-communicator.log")"
        st=1
      fi
    else
      expect "nccl: its GPU test says why it skips on the CPU" grep -q 'SKIPPED \] Communicator.NcclReducesTensorsOnTheGpus' "$logs/nccl-communicator.log"
    fi
  else
    check FAIL "nccl: the communicator's tests" "$build/bin/host_tests was not built"
    st=1
  fi
  end "$(status_word $st)" "one process makes no process group: NCCL's collectives are exercised by the communicator's tests"
fi
