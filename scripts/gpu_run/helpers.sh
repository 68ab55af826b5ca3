# shellcheck shell=bash
# The clock, the phase and check records, the logs and the summary of scripts/gpu_run.sh, which
# sources this file before its phases.
now() { date +%s.%N; }
elapsed() { awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
deadline=$(awk -v a="$t0" -v b="$budget" 'BEGIN { printf "%.0f", a + b }')
# remaining: whole seconds left before the deadline, less 10 for packing the results.
remaining() { awk -v d="$deadline" -v n="$(now)" 'BEGIN { r = d - n - 10; printf "%d", (r > 0 ? r : 0) }'; }
# limit <seconds>: the smaller of <seconds> and what remains.
limit() { local r; r=$(remaining); echo $(($1 < r ? $1 : r)); }

phases=()   # "name|status|seconds|note"
checks=()   # "PASS|FAIL|N/A|name|detail"
current="" phase_start="" in_phase=0

timeline() { printf '%8s s  %s\n' "$(elapsed)" "$*" >>"$out/timeline.txt"; }
check() {  # check <PASS|FAIL|N/A> <name> <detail>
  checks+=("$1|$2|$3")
  echo "gpu_run:   [$1] $2: $3"
}
# expect <name> <command...>: a check that passes when the command succeeds.
expect() {
  local name=$1
  shift
  if "$@" >/dev/null 2>&1; then check PASS "$name" "$*"; else check FAIL "$name" "$*"; fi
}

begin() {  # begin <phase> <what>
  current=$1 phase_start=$(now) in_phase=1
  timeline "start $1 ($2; $(remaining) s left)"
  echo "gpu_run: == $1: $2"
}
end() {  # end <status> [note]
  local seconds
  seconds=$(awk -v a="$phase_start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  phases+=("$current|$1|$seconds|${2:-}")
  in_phase=0
  timeline "end   $current: $1 after $seconds s${2:+ — $2}"
  echo "gpu_run: == $current: $1 ($seconds s)${2:+ — $2}"
  write_summary
  pack_logs
}
# run_logged <log name> <seconds> <command...>: runs under timeout, output to the log; returns
# the command's status (124 on timeout).
run_logged() {
  local log="$logs/$1" seconds=$2
  shift 2
  echo "\$ $*" >>"$log"
  timeout --kill-after=10 "$seconds" "$@" >>"$log" 2>&1
  local status=$?
  echo "[exit $status]" >>"$log"
  return $status
}
status_word() {  # status_word <exit status>
  case "$1" in 0) echo ok ;; 124 | 137) echo timeout ;; *) echo "failed (exit $1)" ;; esac
}
# skip_if_late <phase> <seconds needed>: records the phase as skipped when less time remains.
skip_if_late() {
  if [ "$(remaining)" -lt "$2" ]; then
    current=$1 phase_start=$(now)
    end skipped "less than $2 s left of the $budget s budget"
    return 0
  fi
  return 1
}

pack_logs() {
  tar -czf "$out/logs.tar.gz.tmp" -C "$work" logs 2>/dev/null && mv "$out/logs.tar.gz.tmp" "$out/logs.tar.gz"
}

# toml_value <file> <table> <key>: the value of key in [table] of a TOML file, as written.
toml_value() {
  awk -v t="[$2]" -v k="$3" '
    /^\[/ { inside = ($0 == t); next }
    inside && $1 == k && $2 == "=" { sub(/^[^=]*= */, ""); print; exit }' "$1"
}
# epoch_seconds <metrics.jsonl> <epoch>: the "seconds" of that epoch's line.
epoch_seconds() {
  sed -n "${2}p" "$1" | grep -o '"seconds": *[0-9.e+-]*' | sed 's/.*: *//'
}
junit_counts() {  # junit_counts <file>: "tests T, failures F, skipped S, errors E"
  local f=$1
  [ -f "$f" ] || { echo "no JUnit file"; return; }
  local head
  head=$(tr '\n\t' '  ' <"$f" | grep -o '<testsuite [^>]*>' | head -n 1)
  local t fl s e
  t=$(grep -o ' tests="[0-9]*"' <<<"$head" | grep -o '[0-9]*')
  fl=$(grep -o ' failures="[0-9]*"' <<<"$head" | grep -o '[0-9]*')
  s=$(grep -o ' skipped="[0-9]*"' <<<"$head" | grep -o '[0-9]*')
  e=$(grep -o ' errors="[0-9]*"' <<<"$head" | grep -o '[0-9]*')
  echo "tests ${t:-?}, failures ${fl:-?}, skipped ${s:-0}, errors ${e:-0}"
}

write_summary() {
  local f="$out/summary.md.tmp"
  {
    echo "# GPU run of wscsl"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'); commit ${commit:-unknown}; device \`$device\`$([ "$quick" = 1 ] && echo ', --quick'); budget $budget s, $(elapsed) s elapsed."
    echo "${gpu_name:+GPU: $gpu_name. }${torch_line:+PyTorch: $torch_line. }cores: $jobs."
    echo
    echo "## Phases"
    echo "| phase | status | seconds | note |"
    echo "|---|---|---:|---|"
    local p name st sec note
    for p in "${phases[@]}"; do
      IFS='|' read -r name st sec note <<<"$p"
      echo "| $name | $st | $sec | $note |"
    done
    [ "$in_phase" = 0 ] || echo "| $current | running when this was written | | |"
    echo
    echo "## Checks"
    echo "| result | check | detail |"
    echo "|---|---|---|"
    local c r n d
    for c in "${checks[@]}"; do
      IFS='|' read -r r n d <<<"$c"
      echo "| $r | $n | \`$d\` |"
    done
    echo
    echo "## Speed (steps/s)"
    if [ -f "$out/speed.csv" ]; then
      echo '```'
      cat "$out/speed.csv"
      echo '```'
    else
      echo "not measured (yet)"
    fi
    echo
    echo "data_seconds: for wscsl, the part of its timed epoch that the steps waited for their batch"
    echo "(read ahead on a background thread, pinned, queued to the device: \`metrics.jsonl\`'s"
    echo "\`data_seconds\`); for PyTorch eager, the time its loop spends making, pinning and queueing"
    echo "batches between steps."
    echo
    echo "## Tests"
    echo "- device, collectives, numerics (\`$device_tests\`): $(junit_counts "$out/junit-device.xml")"
    echo "- the rest (\`$rest_tests\` but \`$rest_excluded\`): $(junit_counts "$out/junit-rest.xml")"
    local failed
    failed=$(sed -n '/The following tests FAILED:/,/^Errors while running CTest/p' "$logs"/ctest-*.log 2>/dev/null |
      grep -v 'Errors while running' | head -n 60)
    [ -z "$failed" ] || { echo; echo '```'; echo "$failed"; echo '```'; }
    echo
    echo "## Environment"
    echo '```'
    head -n 80 "$logs/environment.log" 2>/dev/null
    echo '```'
    if [ -f "$logs/failures.log" ]; then
      echo
      echo "## Ends of the logs of what failed"
      echo '```'
      tail -n 200 "$logs/failures.log"
      echo '```'
    fi
  } >"$f"
  mv "$f" "$out/summary.md"
}

# note_failure <log name>: keeps the end of a failed command's log for the summary.
note_failure() {
  { echo "--- $1 (last 25 lines)"; tail -n 25 "$logs/$1"; } >>"$logs/failures.log"
}
