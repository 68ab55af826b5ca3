# shellcheck shell=bash
# Phase 4: waiting for the tests' build.
# Sourced by scripts/gpu_run.sh after the phases numbered before it.
if [ -n "$build_pid" ]; then
  begin build-tests "waiting for the tests' build"
  wait "$build_pid"
  st=$(sed -n 's/^\[exit \([0-9]*\)\]$/\1/p' "$logs/build-tests.log" | tail -n 1)
  [ "${st:-1}" = 0 ] || note_failure build-tests.log
  end "$(status_word "${st:-1}")" "$(grep -c 'warning:' "$logs/build-tests.log") compiler warnings"
fi
