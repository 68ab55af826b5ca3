#!/usr/bin/env bash
# The GPU run (docs/platforms.md, "The GPU run"): on a GPU machine with python3's CUDA PyTorch, a
# compiler, CMake and the carried dependency prefix, in one bounded script — builds wscsl, trains
# the default pipeline and a ResNet-18 outfit pipeline on the GPU (then resume, eval, embed), runs
# one-process training with trainer.collective_backend = "nccl" and the communicator's NCCL tests,
# measures steps/s beside PyTorch eager (bench/eager_reference.py) on the same net, batch and data,
# and runs the tests that touch devices, collectives and numerics, then the rest of the suite while
# time remains. Every phase runs under `timeout`; a failed phase is recorded and the next one runs.
# The phases are the files scripts/gpu_run/NN-*.sh, sourced in the order of their numbers after
# scripts/gpu_run/helpers.sh.
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

# shellcheck source-path=SCRIPTDIR/..
source scripts/gpu_run/helpers.sh
echo "gpu_run: results in $out, scratch in $work, budget $budget s, device $device"
timeline "gpu_run.sh on $(uname -n) — device $device, budget $budget s, quick $quick"
write_summary

source scripts/gpu_run/10-environment.sh
source scripts/gpu_run/20-build.sh
source scripts/gpu_run/30-train.sh
source scripts/gpu_run/40-build-tests.sh
source scripts/gpu_run/50-nccl.sh
source scripts/gpu_run/60-speed.sh
source scripts/gpu_run/70-tests.sh

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
