#!/usr/bin/env bash
# Configures and builds wscsl in ./build (incrementally; ccache makes rebuilds cheap).
# Usage: scripts/build.sh [cmake --build arguments, e.g. --target runtime]
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache can serve translation units that use the shared precompiled LibTorch header, and, with
# paths relative to the checkout, those of another checkout of the same sources.
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" "$@"
