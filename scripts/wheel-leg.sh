#!/usr/bin/env bash
# The wheel leg: wscsl built against PyPI's PyTorch as a researcher on Debian or Ubuntu has it —
# the distribution's own libraries (scripts/setup.sh test), a virtual environment with the wheels
# scripts/pip-requirements.txt pins (torch and torchvision as `pip install` gives them, the CUDA
# build; tensorboard, pytorch-metric-learning, CMake), the CUDA toolkit's nvcc on the PATH — by the
# README's command `scripts/build.sh --torch python`, then the whole suite against it, the parity
# tests against that PyTorch and torchvision included. No GPU is needed: the suite runs on the CPU.
# Usage: scripts/test.sh --wheel [--record]
#   --record: append the run to docs/legs.tsv (scripts/legs.py)
# Environment: WSCSL_WHEEL_VENV (default build-wheel-venv: the virtual environment, made again
#              when the requirements change), WSCSL_CUDA_TOOLKIT (default /usr/local/cuda; empty:
#              build without nvcc).
set -euo pipefail
cd "$(dirname "$0")/.."
leg=wheel
record=0
for argument in "$@"; do
  case "$argument" in
    --record) record=1 ;;
    *) echo "$leg: unknown argument '$argument' (scripts/test.sh --wheel [--record])" >&2; exit 2 ;;
  esac
done
fail() {
  echo "$leg: $*" >&2
  exit 1
}
minutes_since() { awk -v a="$1" -v b="$(date +%s)" 'BEGIN { printf "%.1f", (b - a) / 60 }'; }
start=$(date +%s)
scripts/setup.sh test

venv="$(realpath -m "${WSCSL_WHEEL_VENV:-build-wheel-venv}")"
requirements=scripts/pip-requirements.txt
stamp="$(sha256sum "$requirements" | cut -c1-16)"
if [ "$(cat "$venv/.wscsl-requirements" 2>/dev/null || true)" != "$stamp" ]; then
  echo "$leg: making the virtual environment $venv from $requirements"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv" || fail "python3 -m venv $venv failed"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install -q -r "$requirements" ||
    fail "pip install -r $requirements failed"
  echo "$stamp" >"$venv/.wscsl-requirements"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
cuda="${WSCSL_CUDA_TOOLKIT-/usr/local/cuda}"
if [ -n "$cuda" ]; then
  [ -x "$cuda/bin/nvcc" ] ||
    fail "no nvcc in $cuda/bin (the CUDA toolkit the wheel's CMake package asks for; WSCSL_CUDA_TOOLKIT names another, or is empty to build without one)"
  PATH="$cuda/bin:$PATH"
fi
python3 -c 'import torch, torchvision
print(f"wheel: PyTorch {torch.__version__} (CUDA {torch.version.cuda}), torchvision {torchvision.__version__}")'

build_start=$(date +%s)
scripts/build.sh --torch python --build-dir build-wheel
build_minutes=$(minutes_since "$build_start")
grep -q "^Torch_DIR:PATH=$venv/lib/python3[.0-9]*/site-packages/torch/" build-wheel/CMakeCache.txt ||
  fail "the build did not take LibTorch from the virtual environment $venv"

suite_start=$(date +%s)
status=0
(cd build-wheel && ctest --output-on-failure -j "$(nproc)" --output-junit junit.xml) || status=$?
# The launch matrix's other mixed cell: the build against Debian's LibTorch (scripts/test.sh's, when
# this checkout has one) under this environment's torchrun.
if [ -x build/bin/launch_tests ]; then
  (cd build && WSCSL_OTHER_PYTHON="$venv/bin/python3" ctest -R '^launch\.mixed_torchrun$' \
    --output-on-failure) || status=$?
fi
suite_minutes=$(minutes_since "$suite_start")
echo "$leg: built in $build_minutes minutes, the suite in $suite_minutes, $(minutes_since "$start") in all"
if [ "$record" = 1 ]; then
  scripts/legs.py record "$leg" --junit build-wheel/junit.xml \
    --libtorch "$(python3 -c 'import torch; print(torch.__version__)') wheel" \
    --build-minutes "$build_minutes" --suite-minutes "$suite_minutes" \
    --total-minutes "$(minutes_since "$start")"
fi
exit $status
