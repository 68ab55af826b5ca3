#!/usr/bin/env bash
# The GPU run (docs/platforms.md, "The GPU run"): on a GPU machine with python3's CUDA PyTorch, a
# compiler, CMake and the carried dependency prefix, in one bounded script — builds wscsl, trains
# the default pipeline and a ResNet-18 outfit pipeline on the GPU (then resume, eval, embed), runs
# one-process training with trainer.collective_backend = "nccl" and the communicator's NCCL tests,
# measures steps/s beside PyTorch eager (bench/eager_reference.py) on the same net, batch and data,
# and runs the tests that touch devices, collectives and numerics, then the rest of the suite while
# time remains. Every phase runs under `timeout`; a failed phase is recorded and the next one runs.
#
# What comes back, in OUT_DIR (at most 8 files, as the GPU machines return):
#   summary.md      phases, checks, speed, tests, environment — rewritten after every phase
#   timeline.txt    elapsed seconds at each phase's start and end
#   speed.csv       steps/s of wscsl and PyTorch eager, and their ratio
#   junit-device.xml, junit-rest.xml   CTest's JUnit output
#   logs.tar.gz     every log (build, each command, nvidia-smi, the runs' resolved.toml), repacked
#                   after every phase
#
# Usage: scripts/gpu_run.sh OUT_DIR [options]
#   --deps-archive FILE  the packed dependency prefix to unpack (scripts/deps-prefix.sh makes it;
#                        default deps/wscsl-deps.tar.xz when it exists and no --deps is given)
#   --deps DIR           an unpacked dependency prefix instead
#   --fashion-mnist DIR  Debian's Fashion-MNIST files (*-idx?-ubyte.gz), copied to
#                        /usr/share/datasets/fashion-mnist where that is missing (default:
#                        deps/fashion-mnist)
#   --device cuda|cpu    where to train and test (default cuda); the checks expect this device
#   --quick              tiny step counts, a few tests, a longer budget: proves on a CPU machine
#                        that every phase's commands and parsing work (with --device cpu)
#   --build-dir DIR      the build (default build-gpu)
#   --no-build           use the build in --build-dir as it is (e.g. --build-dir build)
#   --budget SECONDS     the whole run's time (default 460; --quick: 1800)
#   --work DIR           scratch folder for runs, data and logs (default: a new one under /tmp)
#   --python PATH        the python3 of PyTorch for the eager reference (default: the build's
#                        WSCSL_PYTHON, else python3)
#   --commit TEXT        the commit to record (default: git rev-parse, else $WSCSL_COMMIT)
#   --device-tests REGEX, --rest-tests REGEX   CTest selections (defaults below)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
checkout="$PWD"
t0=$(date +%s.%N)

usage() {
  sed -n '/^# Usage:/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
[ $# -ge 1 ] || usage
case "$1" in -*) usage ;; esac
out="$(realpath -m "$1")"
shift
deps_archive="" deps_dir="" fashion_src="deps/fashion-mnist" device=cuda quick=0
build=build-gpu no_build=0 budget="" work="" python="" commit="${WSCSL_COMMIT:-}"
device_tests="" rest_tests=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || [ "$1" = --quick ] || [ "$1" = --no-build ] || usage
  case "$1" in
    --deps-archive) deps_archive="$2"; shift 2 ;;
    --deps) deps_dir="$2"; shift 2 ;;
    --fashion-mnist) fashion_src="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --build-dir) build="$2"; shift 2 ;;
    --no-build) no_build=1; shift ;;
    --budget) budget="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --commit) commit="$2"; shift 2 ;;
    --device-tests) device_tests="$2"; shift 2 ;;
    --rest-tests) rest_tests="$2"; shift 2 ;;
    *) usage ;;
  esac
done
case "$device" in cuda | cpu) ;; *) echo "gpu_run: --device is cuda or cpu, not '$device'" >&2; exit 2 ;; esac
[ -n "$budget" ] || budget=$([ "$quick" = 1 ] && echo 1800 || echo 460)
if [ -z "$deps_archive" ] && [ -z "$deps_dir" ] && [ -f deps/wscsl-deps.tar.xz ]; then
  deps_archive=deps/wscsl-deps.tar.xz
fi
jobs=$(nproc)

# Step counts: per epoch of the speed runs (two epochs, the second timed), of the training checks.
# The ResNet-18 speed rows take batches of 64 triplets (192 images at 112 px), as the default net's;
# --quick takes 8, which a CPU steps through in seconds, on one thread (two threads of a 2-core
# machine that is busy elsewhere stall every step: docs/benchmarks.md); the GPU run takes every core
# (threads = 0), wscsl and PyTorch alike.
if [ "$quick" = 1 ]; then
  speed_steps=20 resnet_speed_steps=2 resnet_batch=8 resnet_threads=1 train_steps=10 nccl_steps=3
else
  speed_steps=500 resnet_speed_steps=100 resnet_batch=64 resnet_threads=0 train_steps=200 nccl_steps=50
fi
# The tests that touch devices, collectives and numerics (their GPU cases where a GPU is visible),
# then the rest but the reproduction guide's every-pipeline test (20 minutes on 2 cores).
if [ -z "$device_tests" ]; then
  if [ "$quick" = 1 ]; then
    device_tests='^(plugin\.convnet|plugin\.torchscript_backbone|plugin\.margin)$'
  else
    device_tests='^(host|distributed|crash|cli|plugin\..*|parity\..*|python\.round_trip|example\.python|tensorboard\.event_files)$'
  fi
fi
if [ -z "$rest_tests" ]; then
  rest_tests=$([ "$quick" = 1 ] && echo '^fuzz\.csv\.replay$' || echo '.')
fi
rest_excluded='^cli\.paper_pipelines$'

mkdir -p "$out"
rm -f "$out"/summary.md "$out"/timeline.txt "$out"/speed.csv "$out"/junit-*.xml "$out"/logs.tar.gz
if [ -z "$work" ]; then
  work="$(mktemp -d /tmp/wscsl-gpu-run.XXXXXX)"
else
  [ ! -e "$work" ] || [ -z "$(ls -A "$work")" ] || {
    echo "gpu_run: --work $work is not empty" >&2
    exit 2
  }
  mkdir -p "$work"
  work="$(realpath "$work")"
fi
logs="$work/logs"
mkdir -p "$logs"

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

echo "gpu_run: results in $out, scratch in $work, budget $budget s, device $device"
timeline "gpu_run.sh on $(uname -n) — device $device, budget $budget s, quick $quick"
write_summary

# --- (a) the environment and the dependency prefix ----------------------------------------------
begin environment "versions, GPU, the dependency prefix, Fashion-MNIST"
env_status=ok env_note=""
[ -n "$commit" ] || commit=$(git -C "$checkout" rev-parse --short HEAD 2>/dev/null || echo "")
if [ -z "$python" ]; then
  python=$(sed -n 's/^WSCSL_PYTHON:FILEPATH=//p' "$build/CMakeCache.txt" 2>/dev/null)
  [ -n "$python" ] || python=python3
fi
{
  echo "commit: ${commit:-unknown}"
  echo "user: $(id -un 2>/dev/null) (uid $(id -u))"
  echo "host: $(uname -n); cores: $(nproc); $(free -g | awk '/^Mem:/ { print "memory: " $2 " GiB" }')"
  # shellcheck disable=SC1091
  (. /etc/os-release 2>/dev/null && echo "system: $PRETTY_NAME; $(ldd --version 2>/dev/null | head -n 1)")
  echo "g++: $(g++ --version 2>/dev/null | head -n 1)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1); ninja: $(ninja --version 2>/dev/null || echo none)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 1 || echo none)"
  echo "python: $python"
  timeout 60 "$python" - <<'PY' 2>&1
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
      torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
      "cxx11 abi", torch.compiled_with_cxx11_abi())
print("cuda available", torch.cuda.is_available(), "devices", torch.cuda.device_count())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print("gpu0", p.name, round(p.total_memory / 2**30, 1), "GiB", "sm", f"{p.major}.{p.minor}")
try:
    import torchvision
    print("torchvision", torchvision.__version__)
except Exception as e:
    print("torchvision: none", e)
try:
    import nvidia.nccl, os
    print("nccl wheel", os.path.dirname(nvidia.nccl.__file__))
except Exception:
    print("nccl wheel: none")
try:
    import tensorboard
    print("tensorboard", tensorboard.__version__)
except Exception:
    print("tensorboard: none")
PY
  echo "nvidia-smi:"
  timeout 30 nvidia-smi 2>&1 || echo "(no nvidia-smi)"
} >"$logs/environment.log" 2>&1
torch_line=$(grep -m1 '^torch ' "$logs/environment.log" | sed 's/^torch //')
gpu_name=$(grep -m1 '^gpu0 ' "$logs/environment.log" | sed 's/^gpu0 //')
if [ "$device" = cuda ]; then
  if grep -q '^cuda available True' "$logs/environment.log"; then
    check PASS "python3's PyTorch sees a GPU" "$gpu_name"
  else
    check FAIL "python3's PyTorch sees a GPU" "$(grep -m1 '^cuda available' "$logs/environment.log")"
    env_status="failed"
  fi
else
  check N/A "python3's PyTorch sees a GPU" "--device cpu: $(grep -m1 '^cuda available' "$logs/environment.log" || echo 'no torch')"
fi
if [ -n "$deps_archive" ]; then
  mkdir -p "$work/deps"
  # tar needs xz for .tar.xz; Python's tarfile reads it without.
  if run_logged environment.log 120 tar -xJf "$deps_archive" -C "$work/deps" ||
    run_logged environment.log 120 "$python" -c \
      'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$deps_archive" "$work/deps"; then
    deps_dir=$(dirname "$(find "$work/deps" -maxdepth 2 -name .wscsl-deps-stamp | head -n 1)")
    env_note="prefix $(du -sh "$deps_dir" | cut -f1) unpacked from $deps_archive"
  else
    env_status="failed" env_note="cannot unpack $deps_archive"
  fi
fi
if [ -n "$deps_dir" ]; then
  expect "the dependency prefix is one" test -f "$deps_dir/.wscsl-deps-stamp"
  head -n 40 "$deps_dir/MANIFEST" >>"$logs/environment.log" 2>/dev/null
fi
fm=/usr/share/datasets/fashion-mnist
if [ ! -f "$fm/train-images-idx3-ubyte.gz" ] && [ -d "$fashion_src" ]; then
  mkdir -p "$fm" && cp "$fashion_src"/*.gz "$fm"/ 2>>"$logs/environment.log" &&
    echo "Fashion-MNIST copied from $fashion_src to $fm" >>"$logs/environment.log"
fi
if [ -f "$fm/train-images-idx3-ubyte.gz" ] && [ -f "$fm/t10k-images-idx3-ubyte.gz" ]; then
  check PASS "Fashion-MNIST is in $fm" "$(du -sh "$fm" | cut -f1)"
else
  check FAIL "Fashion-MNIST is in $fm" "carry it (deps/fashion-mnist) or install dataset-fashion-mnist"
  env_status="failed"
fi
end "$env_status" "$env_note"

# --- (b) the build ------------------------------------------------------------------------------
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

# --- (d) training on the device: the default pipeline, then a ResNet-18 outfit pipeline ---------
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

# --- the tests' build ----------------------------------------------------------------------------
if [ -n "$build_pid" ]; then
  begin build-tests "waiting for the tests' build"
  wait "$build_pid"
  st=$(sed -n 's/^\[exit \([0-9]*\)\]$/\1/p' "$logs/build-tests.log" | tail -n 1)
  [ "${st:-1}" = 0 ] || note_failure build-tests.log
  end "$(status_word "${st:-1}")" "$(grep -c 'warning:' "$logs/build-tests.log") compiler warnings"
fi

# --- (e) NCCL -----------------------------------------------------------------------------------
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

# --- (f) speed beside PyTorch eager -------------------------------------------------------------
# wscsl_rate <run dir> <steps>: steps / seconds of the second epoch (the first warms up), its
# seconds, and the part of them its steps waited for data.
wscsl_rate() {
  local s d
  s=$(epoch_seconds "$1/metrics.jsonl" 2)
  d=$(sed -n 2p "$1/metrics.jsonl" | grep -o '"data_seconds": *[0-9.e+-]*' | sed 's/.*: *//')
  [ -n "$s" ] && awk -v n="$2" -v s="$s" -v d="$d" \
    'BEGIN { printf "%.4f %.6f %s", n / s, s, (d == "" ? "?" : sprintf("%.6f", d)) }'
}
json_field() { grep -o "\"$2\": *[^,}]*" <<<"$1" | head -n 1 | sed 's/^[^:]*: *//; s/"//g'; }
# speed_row <net> <precision> <wscsl rate> <wscsl seconds> <wscsl data seconds> <eager json>
#           <steps> <batch>
speed_row() {
  local net=$1 precision=$2 rate=$3 secs=$4 data=$5 eager=$6 steps=$7 batch=$8 erate esecs edata ratio
  erate=$(json_field "$eager" steps_per_s)
  esecs=$(json_field "$eager" seconds)
  edata=$(json_field "$eager" data_s)
  ratio=$(awk -v a="$rate" -v b="$erate" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "" }')
  echo "$net,$precision,wscsl,$device,$batch,$steps,$secs,$rate,$ratio,$data" >>"$out/speed.csv"
  echo "$net,$precision,pytorch-eager,$device,$batch,$steps,$esecs,$erate,1.00,$edata" >>"$out/speed.csv"
  if [ -n "$ratio" ]; then
    check PASS "speed: $net ($precision) measured" "wscsl $rate steps/s (data wait $data s of $secs), eager $erate, ratio $ratio"
  else
    check FAIL "speed: $net ($precision) measured" "wscsl '$rate', eager '$erate'"
  fi
  # The issue's targets are for float32; bfloat16 is measured beside them.
  [ "$precision" = 32 ] || return 0
  # The issue's targets on the GPU: 1.3× eager on the default net, 1.0× on ResNet-18 at 112 px.
  local target
  target=$([ "$net" = default ] && echo 1.3 || echo 1.0)
  if [ "$device" != cuda ]; then
    check N/A "speed target: $net ≥ ${target}× eager on the GPU" "--device cpu: ratio ${ratio:-?}"
  elif awk -v r="${ratio:-0}" -v t="$target" 'BEGIN { exit !(r >= t) }'; then
    check PASS "speed target: $net ≥ ${target}× eager on the GPU" "ratio $ratio"
  else
    check FAIL "speed target: $net ≥ ${target}× eager on the GPU" "ratio ${ratio:-?}"
  fi
}

if ! skip_if_late speed 40; then
  begin speed "steps/s of wscsl and PyTorch eager: the default net, ResNet-18 at 112 px"
  echo "net,precision,implementation,device,batch,steps,seconds,steps_per_s,ratio_to_eager,data_seconds" >"$out/speed.csv"
  st=0
  crb="$work/crb"
  triplets=$((speed_steps > resnet_speed_steps ? speed_steps : resnet_speed_steps))
  items=$([ "$quick" = 1 ] && echo 600 || echo 4000)
  crb_args=(--set dataset.train_items="$items" --set dataset.val_items=200 --set dataset.test_items=200
    --set dataset.train_triplets=$((triplets * 64)) --set dataset.val_triplets=64
    --set dataset.test_triplets=64)
  # The benchmark's pixels and triplets, for PyTorch and for the ResNet-18 pipeline.
  run_logged speed-export.log "$(limit 90)" "$wscsl" export examples/pipelines/default.toml --out "$crb" \
    "${crb_args[@]}" || { st=$?; note_failure speed-export.log; }
  eager=("$python" bench/eager_reference.py "$crb" --device "$device")
  # threads_of <train log>: the threads wscsl's run line reports, for PyTorch to take as many.
  threads_of() { sed -n 's/^run .* — \([0-9]*\) threads.*/\1/p' "$logs/$1" | head -n 1; }

  # speed_pair <net> <precision> <steps> <batch> <wscsl train arguments...>: wscsl's rate on the
  # device, then PyTorch eager's on as many threads, and their row.
  speed_pair() {
    local net=$1 precision=$2 steps=$3 batch=$4 name="speed-$1-$2" rate secs data eager_json
    shift 4
    rm -rf "$work/runs/$name"
    run_logged "$name-wscsl.log" "$(limit 150)" "$wscsl" train "$@" --run-dir "$work/runs/$name" \
      --set "trainer.precision=\"$precision\"" || { st=$?; note_failure "$name-wscsl.log"; }
    read -r rate secs data <<<"$(wscsl_rate "$work/runs/$name" "$steps")"
    run_logged "$name-eager.log" "$(limit 150)" "${eager[@]}" --model "$net" --precision "$precision" \
      --threads "$(threads_of "$name-wscsl.log")" --batch "$batch" --steps "$steps" \
      --warmup $((steps / 2 > 2 ? steps / 2 : 2)) || { st=$?; note_failure "$name-eager.log"; }
    eager_json=$(grep '^{' "$logs/$name-eager.log" | tail -n 1)
    speed_row "$net" "$precision" "${rate:-}" "${secs:-}" "${data:-}" "$eager_json" "$steps" "$batch"
    local eager_device
    eager_device=$(json_field "$eager_json" device)
    if [[ "$eager_device" == "$device"* ]]; then check PASS "speed: the eager reference ran on $device" "$name: $eager_device"; else
      check FAIL "speed: the eager reference ran on $device" "$name: '$eager_device'"; fi
    [ ! -f "$work/runs/$name/resolved.toml" ] || device_checks "$name" "$work/runs/$name" "$name-wscsl.log"
    speed_rates+=("$net $precision: ${rate:-?}")
  }
  speed_rates=()
  # The default net: the default pipeline as written but for the sizes (one thread, as written).
  default_args=(examples/pipelines/default.toml "${crb_args[@]}"
    --set dataset.train_triplets=$((speed_steps * 64)) --set trainer.epochs=2
    --set trainer.validate=false --set trainer.evaluate_after=false
    --set trainer.log_every="$speed_steps" --set trainer.device="$device")

  # ResNet-18 at 112 px on the same images, upscaled (image_folder), its triplets drawn from their
  # labels by the rule of the benchmark's.
  source bench/resnet18_crb.sh
  resnet18_crb_pipeline "$crb" >"$work/resnet.toml"
  # Two pair tokens, the eager reference's DiscoverNet-Set.
  resnet_args=("$work/resnet.toml" --set dataset.cache_dir="$work/cache"
    --set dataset.train_triplets=$((resnet_speed_steps * resnet_batch))
    --set condition_module.pairs=2 --set trainer.epochs=2 --set trainer.batch_size="$resnet_batch"
    --set trainer.threads="$resnet_threads" --set 'trainer.optimizer="adam"' --set trainer.lr=1e-3
    --set trainer.validate=false --set trainer.evaluate_after=false
    --set trainer.log_every="$resnet_speed_steps" --set trainer.device="$device")
  # float32 first (the issue's targets), then bfloat16 mixed precision.
  for precision in 32 bf16-mixed; do
    speed_pair default "$precision" "$speed_steps" 64 "${default_args[@]}"
    speed_pair resnet18 "$precision" "$resnet_speed_steps" "$resnet_batch" "${resnet_args[@]}"
  done
  end "$(status_word $st)" "wscsl steps/s: ${speed_rates[*]} (speed.csv)"
fi

# --- (c) the tests ------------------------------------------------------------------------------
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

current=""
timeline "done"
write_summary
pack_logs
failed=0
for p in "${phases[@]}"; do
  IFS='|' read -r _ st _ _ <<<"$p"
  case "$st" in ok | skipped) ;; *) failed=$((failed + 1)) ;; esac
done
for c in "${checks[@]}"; do [ "${c%%|*}" != FAIL ] || failed=$((failed + 1)); done
echo "gpu_run: $(elapsed) s; $failed failed phases and checks; summary: $out/summary.md"
[ $failed = 0 ]
