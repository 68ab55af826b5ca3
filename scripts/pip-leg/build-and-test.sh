#!/usr/bin/env bash
# The pip leg's build and tests, run in its Debian 12 root (scripts/pip-leg.sh) with the virtual
# environment active: the README's build against the wheel's PyTorch, a check that every library
# came from the virtual environment or the dependency prefix (CMake's cache, ldd), the whole test
# suite, then the GPU run's CPU rehearsal.
# Usage (in the root, in /wscsl): scripts/pip-leg/build-and-test.sh VENV BUILD_DIR JOBS
set -euo pipefail
venv=$1
build_dir=$2
jobs=$3
leg=pip

phase_start=$(date +%s)
mkdir -p "$build_dir"
scripts/build.sh --torch python --deps /opt/wscsl-deps --build-dir "$build_dir" 2>&1 |
  tee "$build_dir/build.log"
echo "$leg: built in $(($(date +%s) - phase_start)) s, $(grep -c 'warning:' "$build_dir/build.log" || true) warning lines"

echo "$leg: where the libraries came from (CMakeCache.txt):"
grep -E '^((Torch|Caffe2|OpenCV|Boost|boost_headers|tomlplusplus|GTest|nlohmann_json|CLI11)_DIR|Protobuf_(INCLUDE_DIR|LIBRARY_RELEASE|PROTOC_EXECUTABLE)|ZLIB_LIBRARY_RELEASE|CMAKE_(CXX|CUDA)_COMPILER):' \
  "$build_dir/CMakeCache.txt" | sed 's/^/  /'
echo "  fmt (header-only): $(readlink "$build_dir/wscsl_torch_fmt/fmt")"
readlink "$build_dir/wscsl_torch_fmt/fmt" | grep -q "^$venv/" ||
  { echo "$leg: the build did not take fmt from the wheel" >&2; exit 1; }
for found in OpenCV_DIR Boost_DIR GTest_DIR tomlplusplus_DIR Protobuf_INCLUDE_DIR; do
  grep -q "^$found:[A-Z]*=/opt/wscsl-deps/" "$build_dir/CMakeCache.txt" ||
    { echo "$leg: the build did not take $found from the dependency prefix" >&2; exit 1; }
done
grep -q "^Torch_DIR:PATH=$venv/lib/python3[.0-9]*/site-packages/torch/" "$build_dir/CMakeCache.txt" ||
  { echo "$leg: the build did not take LibTorch from the virtual environment" >&2; exit 1; }
echo "$leg: what bin/wscsl loads (ldd):"
ldd "$build_dir/bin/wscsl" | sed 's/^\s*/  /'
if ldd "$build_dir/bin/wscsl" | grep -E 'opencv|boost|fmt|gtest|protobuf|torch|nccl' | grep -v "$venv/"; then
  echo "$leg: bin/wscsl loads the libraries above from outside the virtual environment" >&2
  exit 1
fi

start=$(date +%s)
(cd "$build_dir" && ctest --output-on-failure -j "$jobs")
echo "$leg: tests ran in $(($(date +%s) - start)) s"

start=$(date +%s)
rm -rf "$build_dir/gpu-run-cpu"
scripts/gpu_run.sh "$build_dir/gpu-run-cpu" --device cpu --quick --build-dir "$build_dir" \
  --deps /opt/wscsl-deps --work /tmp/wscsl-gpu-run-cpu
echo "$leg: the GPU run's CPU rehearsal ran in $(($(date +%s) - start)) s"
