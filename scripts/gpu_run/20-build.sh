# shellcheck shell=bash
# Phase 2: the build of wscsl and its plugins; the tests' build starts in the background.
# Sourced by scripts/gpu_run.sh after the phases numbered before it.
wscsl="$build/bin/wscsl"
build_args=(--torch python --build-dir "$build")
[ -z "$deps_dir" ] || build_args+=(--deps "$deps_dir")
build_pid=""
if [ "$no_build" = 1 ]; then
  begin build "none: --no-build, the build in $build as it is"
  if [ -x "$wscsl" ]; then end "skipped" "--no-build: $build used as it is"; else
    end "failed" "--no-build, and $wscsl does not exist"
  fi
else
  begin build-runtime "configure; build wscsl and the plugins with $jobs jobs"
  # build.sh configures (its own python3 for --torch python) and builds the targets asked for.
  python_dir="$(dirname "$(command -v "$python")")"
  export PATH="$python_dir:$PATH"
  # CMake 4 (pip's) refuses package configuration files that ask for compatibility with CMake
  # older than 3.5, as some of the prefix's Debian 12 ones may; earlier CMake ignores this.
  export CMAKE_POLICY_VERSION_MINIMUM=3.5
  # Ninja where there is one (pip's), for a fresh build folder.
  if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then export CMAKE_GENERATOR=Ninja; fi
  # Past a failing translation unit the rest is still built (-k), so that one plugin's error
  # leaves the phases that do not need it to run.
  keep_going=(-k)
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
  [ "${generator:-${CMAKE_GENERATOR:-}}" != Ninja ] || keep_going=(-k 0)
  run_logged build.log "$(limit 330)" scripts/build.sh "${build_args[@]}" --target runtime -- "${keep_going[@]}"
  st=$?
  warnings=$(grep -c 'warning:' "$logs/build.log")
  if [ $st != 0 ]; then
    { echo "--- build.log: the first errors"; grep -m 20 -B 2 -A 6 'error\|Error' "$logs/build.log"; } >>"$logs/failures.log"
    note_failure build.log
  fi
  nccl=$(sed -n 's/^WSCSL_NCCL:BOOL=//p' "$build/CMakeCache.txt" 2>/dev/null)
  end "$(status_word $st)" "$warnings compiler warnings; WSCSL_NCCL=${nccl:-?}"
  if [ "$device" = cuda ]; then
    if [ "$nccl" = ON ]; then check PASS "NCCL is built in" "WSCSL_NCCL=ON"; else
      check FAIL "NCCL is built in" "WSCSL_NCCL=${nccl:-unset} (NCCL_ROOT, the nvidia-nccl wheel)"
    fi
  fi
  # The tests build in the background while the GPU trains (their phase waits for it), whatever
  # of them can be built where the runtime's build failed in part.
  if [ -f "$build/CMakeCache.txt" ] && [ "$(remaining)" -gt 60 ]; then
    timeline "start build-tests in the background ($((jobs > 2 ? jobs - 2 : 1)) jobs)"
    (timeout --kill-after=10 "$(limit 400)" cmake --build "$build" -j $((jobs > 2 ? jobs - 2 : 1)) -- "${keep_going[@]}" \
      >"$logs/build-tests.log" 2>&1; echo "[exit $?]" >>"$logs/build-tests.log") &
    build_pid=$!
  fi
fi
