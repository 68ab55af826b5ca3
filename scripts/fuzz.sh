#!/usr/bin/env bash
# Builds the parsers' libFuzzer targets with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (in ./build-fuzz, without LibTorch) and runs each for a while from its corpus in
# tests/fuzz/corpus/<target>/, then merges the inputs that reached new code into that corpus.
# Prints, per target: executions, executions per second, coverage (edges) and corpus size; a crash
# stops that target with its input saved as build-fuzz/<target>-crash-*.
# Usage: scripts/fuzz.sh [seconds per target, default 300] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true
scripts/setup.sh fuzz
cmake -S . -B build-fuzz -DWSCSL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DWSCSL_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
cmake --build build-fuzz -j "$(nproc)" >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(pipeline_toml set_override csv csn_lists image_header checkpoint_manifest
    type_pairs_pickle hglmm_features npy_matrix)
fi
printf '%-22s %12s %10s %8s %8s %s\n' target executions exec/s edges corpus result
for t in "${targets[@]}"; do
  log="build-fuzz/fuzz_${t}.log"
  result=ok
  # -max_len keeps pipelines within a page or two; -rss_limit_mb bounds what an input may allocate.
  mkdir -p "build-fuzz/corpus/$t"
  if ! build-fuzz/bin/fuzz_"$t" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/${t}-" \
      "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    result="FOUND: see $log and build-fuzz/${t}-crash-*"
  fi
  build-fuzz/bin/fuzz_"$t" -merge=1 -max_len=8192 "tests/fuzz/corpus/$t" "build-fuzz/corpus/$t" \
    >>"$log" 2>&1 || true
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  corpus=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
  printf '%-22s %12s %10s %8s %8s %s\n' "$t" "$execs" "$rate" "$edges" "$corpus" "$result"
done
