#!/usr/bin/env bash
# The cost of a cold build: configures a fresh build folder with ccache off and every compile and
# link command timed (bench/build_time/launcher.sh), builds `runtime` (what scripts/main.sh builds:
# the program and its plugins), then everything else, and prints the wall time of each and the
# seconds of every target (CPU seconds of its translation units and its link, summed).
# Usage: bench/build_time.sh [--torch DIR | --torch python] [--deps DIR] [--jobs N] [--keep DIR]
#   --torch, --deps  as scripts/build.sh takes them (default: the system's LibTorch)
#   --jobs N         parallel jobs (default: the number of cores)
#   --keep DIR       build in DIR and keep it (default: a temporary folder, removed at the end)
# The per-command log is written to build-time.log in the build folder and the table to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
keep=""
build_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --torch | --deps) build_args+=("$1" "$2"); shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "build_time: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -n "$keep" ]; then
  [ ! -e "$keep" ] || { echo "build_time: --keep $keep exists; a cold build needs a new folder" >&2; exit 2; }
  dir=$keep
else
  dir=$(mktemp -d "$PWD/build-time.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
dir=$(realpath "$dir")
export WSCSL_BUILD_TIME_LOG="$dir/build-time.log"
launcher="$PWD/bench/build_time/launcher.sh"
: >"$WSCSL_BUILD_TIME_LOG"
export CCACHE_DISABLE=1
now() { date +%s.%N; }
start=$(now)
# scripts/build.sh configures and builds; CMake takes the launchers, in place of ccache, from the
# environment.
export CMAKE_CXX_COMPILER_LAUNCHER=$launcher CMAKE_CXX_LINKER_LAUNCHER=$launcher
scripts/build.sh "${build_args[@]}" --build-dir "$dir" -j "$jobs" --target runtime >"$dir/build-runtime.out"
runtime_done=$(now)
scripts/build.sh "${build_args[@]}" --build-dir "$dir" -j "$jobs" >"$dir/build-rest.out"
end=$(now)
torch_version=$(sed -n 's/^Torch_DIR:PATH=//p' "$dir/CMakeCache.txt")
python3 bench/build_time/report.py "$WSCSL_BUILD_TIME_LOG" \
  --runtime "$(awk -v a="$start" -v b="$runtime_done" 'BEGIN { print b - a }')" \
  --total "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" \
  --jobs "$jobs" --torch "$torch_version"
