#!/usr/bin/env bash
# Sets up, builds everything and runs the whole test suite; then replays the fuzz corpora through
# the parsers built with AddressSanitizer and UndefinedBehaviorSanitizer (./build-sanitize, without
# LibTorch: about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -S . -B build-sanitize -DWSCSL_PARSERS_ONLY=ON -DWSCSL_SANITIZE=address,undefined \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-sanitize -j "$(nproc)" >/dev/null
(cd build-sanitize && ctest --output-on-failure -j "$(nproc)")
