#!/usr/bin/env bash
# The GPU check (tests/device): builds the communicator's tests against the CUDA LibTorch of this
# machine's PyTorch and runs them on its GPUs (NCCL's construction and collectives). It needs
# python3 with a CUDA PyTorch 2, g++, CMake, GoogleTest, NCCL's header (NCCL_ROOT, else the
# nvidia-nccl wheel's or the system's) and Gloo's headers, which a PyTorch wheel does not ship
# (WSCSL_GLOO_INCLUDE_DIR: a folder holding gloo/, with the gloo/config.h of PyTorch's build).
# Usage: scripts/gpu_check.sh [BUILD_DIR]   (default ./build-gpu-check)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-gpu-check}"

fail() {
  echo "gpu_check: $*" >&2
  exit 1
}

prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')" ||
  fail "python3 cannot import torch (a CUDA PyTorch 2 is needed)"
python3 -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)' ||
  fail "python3's PyTorch is not a CUDA build"
if [ -z "${NCCL_ROOT:-}" ]; then
  NCCL_ROOT="$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' \
    2>/dev/null || true)"
  export NCCL_ROOT
fi

cmake -S tests/device -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  ${WSCSL_GLOO_INCLUDE_DIR:+-DWSCSL_GLOO_INCLUDE_DIR="$WSCSL_GLOO_INCLUDE_DIR"}
cmake --build "$build" -j "$(nproc)"
"$build/communicator_tests"
