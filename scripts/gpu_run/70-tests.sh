# shellcheck shell=bash
# Phase 7: the tests.
# Sourced by scripts/gpu_run.sh after the phases numbered before it.
# ctest_phase <name> <junit file> <ctest selection arguments...>
ctest_phase() {
  local name=$1 junit=$2
  shift 2
  local seconds stop
  seconds=$(limit 100000)
  stop=$(date -d "@$(($(date +%s) + seconds))" +%H:%M:%S)
  begin "$name" "ctest $* -j $jobs, stopping at $stop"
  (cd "$build" && run_logged "ctest-$name.log" "$((seconds + 15))" ctest "$@" -j "$jobs" \
    --timeout "$((seconds < 300 ? seconds : 300))" --stop-time "$stop" --output-on-failure \
    --output-junit "$junit")
  local st=$?
  if grep -q 'No tests were found' "$logs/ctest-$name.log"; then st=1; fi
  [ $st = 0 ] || note_failure "ctest-$name.log"
  end "$(status_word $st)" "$(junit_counts "$junit"); $(grep -m1 'tests passed' "$logs/ctest-$name.log")"
}
if [ -d "$build" ] && ! skip_if_late tests-device 30; then
  ctest_phase tests-device "$out/junit-device.xml" -R "$device_tests"
fi
if [ -d "$build" ] && ! skip_if_late tests-rest 30; then
  ctest_phase tests-rest "$out/junit-rest.xml" -R "$rest_tests" -E "$device_tests|$rest_excluded"
fi
