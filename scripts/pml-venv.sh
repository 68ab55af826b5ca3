#!/usr/bin/env bash
# Makes DIR a venv over Debian's Python (--system-site-packages: python3-torch, -numpy, -sklearn,
# -scipy and -tqdm, which scripts/setup.sh installs) with PyPI's pytorch-metric-learning 2.9.0
# added without its dependencies: the reference the retrieval metrics are compared with
# (plugin.retrieval.pml). Where PyPI cannot be reached it says so and leaves the venv without the
# package, and the parity test is reported skipped.
# Usage: scripts/pml-venv.sh DIR   (WSCSL_PYTHON: the Python to build on, default /usr/bin/python3)
set -euo pipefail
dir=${1:?usage: scripts/pml-venv.sh DIR}
python=${WSCSL_PYTHON:-/usr/bin/python3}
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import pytorch_metric_learning" 2>/dev/null; then
  echo "pml-venv: $dir has pytorch-metric-learning"
  exit 0
fi
"$python" -m venv --system-site-packages "$dir"
if "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  pytorch-metric-learning==2.9.0; then
  echo "pml-venv: $dir has pytorch-metric-learning 2.9.0"
else
  echo "pml-venv: could not install pytorch-metric-learning from PyPI; plugin.retrieval.pml" \
    "will be reported skipped" >&2
fi
