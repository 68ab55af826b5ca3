#!/usr/bin/env bash
# Sets up, builds everything and runs the whole test suite; then runs the core tests and replays
# the fuzz corpora once more in a build with AddressSanitizer and UndefinedBehaviorSanitizer
# (./build-sanitize: only those targets, a few minutes from scratch, seconds with ccache).
# Usage: scripts/test.sh [--wheel | --debian13 | --debian13-cuda | --pip] [--record]
#   --wheel:         instead, build and run the whole suite against PyPI's PyTorch in a virtual
#                    environment, with this system's own libraries (scripts/wheel-leg.sh; about
#                    3 GB of wheels). CI runs it after the default leg.
#   --debian13:      instead, build and run the whole suite against Debian 13's LibTorch 2.6 in a
#                    Debian 13 root (scripts/debian13.sh; as root).
#   --debian13-cuda: the same against Debian 13's CUDA LibTorch 2.6 and CUDA 12.4, in a second
#                    root (scripts/debian13.sh --cuda; as root; about 2.6 GB of packages).
#   --pip:           the same against PyPI's PyTorch in an isolated Debian 12 root that holds no
#                    library but the dependency prefix's (scripts/pip-leg.sh; as root).
#   --record:        append the run of the default, the wheel or a Debian 13 leg (set-up, build and suite,
#                    passed or not) to docs/legs.tsv, which
#                    README's and docs/platforms.md's status are generated from (scripts/legs.py).
set -euo pipefail
cd "$(dirname "$0")/.."
leg="" record=0
for argument in "$@"; do
  case "$argument" in
    --record) record=1 ;;
    --wheel | --debian13 | --debian13-cuda | --pip) leg=$argument ;;
    *)
      echo "test: unknown argument '$argument' (scripts/test.sh [--wheel | --debian13 | --debian13-cuda | --pip] [--record])" >&2
      exit 2
      ;;
  esac
done
case "$leg" in
  "") ;;
  --wheel) if [ "$record" = 1 ]; then exec scripts/wheel-leg.sh --record; else exec scripts/wheel-leg.sh; fi ;;
  --debian13) if [ "$record" = 1 ]; then exec scripts/debian13.sh --record; else exec scripts/debian13.sh; fi ;;
  --debian13-cuda) if [ "$record" = 1 ]; then exec scripts/debian13.sh --cuda --record; else exec scripts/debian13.sh --cuda; fi ;;
  --pip) exec scripts/pip-leg.sh ;;
esac
minutes_since() { awk -v a="$1" -v b="$(date +%s)" 'BEGIN { printf "%.1f", (b - a) / 60 }'; }
start=$(date +%s)
scripts/setup.sh test
build_start=$(date +%s)
scripts/build.sh
build_minutes=$(minutes_since "$build_start")
suite_start=$(date +%s)
status=0  # a failed suite is recorded too, and then fails the command
(cd build && ctest --output-on-failure -j "$(nproc)" --output-junit junit.xml) || status=$?
suite_minutes=$(minutes_since "$suite_start")
echo "test: built in $build_minutes minutes, the suite in $suite_minutes, $(minutes_since "$start") in all"
if [ "$record" = 1 ]; then
  scripts/legs.py record debian12 --junit build/junit.xml \
    --libtorch "$(dpkg-query -W -f='${Version}' libtorch-dev) (Debian 12)" \
    --build-minutes "$build_minutes" --suite-minutes "$suite_minutes" \
    --total-minutes "$(minutes_since "$start")"
fi
[ "$status" -eq 0 ] || exit "$status"
# Without the precompiled header, so that no unit silently depends on what it brings.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWSCSL_SANITIZE=address,undefined -DWSCSL_USE_PCH=OFF >/dev/null
targets=(core_tests margin fashion_crb)
for t in pipeline_toml set_override csv csn_lists image_header checkpoint_manifest type_pairs_pickle \
  hglmm_features npy_matrix; do
  targets+=("fuzz_$t")
done
cmake --build build-sanitize -j "$(nproc)" --target "${targets[@]}" >/dev/null
(cd build-sanitize && ctest --output-on-failure -j "$(nproc)" -R '^core$|^fuzz\.')
