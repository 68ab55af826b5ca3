#!/usr/bin/env bash
# Configures and builds wscsl (incrementally; ccache makes rebuilds cheap).
# Usage: scripts/build.sh [--torch DIR | --torch python] [--deps DIR] [--build-dir DIR]
#                         [cmake --build arguments, e.g. --target runtime]
#   --torch DIR     build against the LibTorch in DIR (the folder holding share/cmake/Torch)
#   --torch python  build against the LibTorch of python3's PyTorch (pip or conda), and run the
#                   parity tests with that python3
#   --deps DIR      take what the system lacks from the dependency prefix DIR
#                   (scripts/deps-prefix.sh makes it)
#   --build-dir DIR where to build (default ./build)
# Without options it builds against the system's LibTorch and libraries (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() {
  echo "build: $*" >&2
  exit 1
}

build=build
configure=()
while [ $# -gt 0 ]; do
  case "$1" in
    --torch)
      [ $# -ge 2 ] || fail "--torch needs a LibTorch folder or 'python'"
      if [ "$2" = python ]; then
        torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')" ||
          fail "python3 cannot import torch (pip install torch, or give --torch a LibTorch folder)"
        configure+=(-DWSCSL_PYTHON="$(command -v python3)")
        # NCCL's header, for a CUDA PyTorch: the nvidia-nccl wheel's, unless NCCL_ROOT names one.
        if [ -z "${NCCL_ROOT:-}" ]; then
          NCCL_ROOT="$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' \
            2>/dev/null || true)"
          export NCCL_ROOT
        fi
      else
        [ -d "$2" ] || fail "--torch $2: no such folder"
        torch_prefix="$(realpath "$2")"
      fi
      configure+=(-DCMAKE_PREFIX_PATH="$torch_prefix")
      shift 2
      ;;
    --deps)
      [ $# -ge 2 ] || fail "--deps needs the folder scripts/deps-prefix.sh made"
      [ -f "$2/.wscsl-deps-stamp" ] ||
        fail "--deps $2: not a dependency prefix (scripts/deps-prefix.sh --out $2 makes one)"
      configure+=(-DWSCSL_DEPS_PREFIX="$(realpath "$2")")
      shift 2
      ;;
    --build-dir)
      [ $# -ge 2 ] || fail "--build-dir needs a folder"
      build="$2"
      shift 2
      ;;
    *) break ;;
  esac
done

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${configure[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" "$@"
