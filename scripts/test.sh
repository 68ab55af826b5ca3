#!/usr/bin/env bash
# Sets up, builds everything and runs the whole test suite; then runs the core tests and replays
# the fuzz corpora once more in a build with AddressSanitizer and UndefinedBehaviorSanitizer
# (./build-sanitize: only those targets, a few minutes from scratch, seconds with ccache).
# Usage: scripts/test.sh [--debian13 | --debian13-cuda | --pip]
#   --debian13:      instead, build and run the whole suite against Debian 13's LibTorch 2.6 in a
#                    Debian 13 root (scripts/debian13.sh; as root).
#   --debian13-cuda: the same against Debian 13's CUDA LibTorch 2.6 and CUDA 12.4, in a second
#                    root (scripts/debian13.sh --cuda; as root; about 2.6 GB of packages).
#   --pip:           the same against PyPI's PyTorch (the CUDA wheel, built with this machine's
#                    nvcc) by the README's commands, in a Debian 12 root with a virtual environment
#                    (scripts/pip-leg.sh; as root; about 3 GB of wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") ;;
  --debian13) exec scripts/debian13.sh ;;
  --debian13-cuda) exec scripts/debian13.sh --cuda ;;
  --pip) exec scripts/pip-leg.sh ;;
  *)
    echo "test: unknown argument '$1' (scripts/test.sh [--debian13 | --debian13-cuda | --pip])" >&2
    exit 2
    ;;
esac
scripts/setup.sh test
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWSCSL_SANITIZE=address,undefined >/dev/null
targets=(core_tests margin fashion_crb)
for t in pipeline_toml set_override csv csn_lists image_header checkpoint_manifest type_pairs_pickle \
  hglmm_features npy_matrix; do
  targets+=("fuzz_$t")
done
cmake --build build-sanitize -j "$(nproc)" --target "${targets[@]}" >/dev/null
(cd build-sanitize && ctest --output-on-failure -j "$(nproc)" -R '^core$|^fuzz\.')
