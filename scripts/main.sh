#!/usr/bin/env bash
# The main job: set up, build, train DiscoverNet on Fashion-CRB with the default pipeline, and
# print the evaluation (GR/OT alignment accuracy, triplet accuracy) of the test split.
# Extra arguments go to `wscsl train`, e.g. scripts/main.sh --set trainer.epochs=1
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh --target runtime
exec build/bin/wscsl train examples/pipelines/default.toml "$@"
