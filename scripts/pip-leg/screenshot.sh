#!/usr/bin/env bash
# TensorBoard's page of a bench suite, photographed by Debian's headless Chromium: run in the pip
# leg's root (scripts/pip-leg.sh --screenshot). Serves SUITE on a free loopback port, waits for it,
# and writes the page (the validation metrics first) to /tmp/tensorboard.png; Chromium as root
# needs --no-sandbox, and the page renders with its script (the virtual time lets it finish).
# Usage (in the root): /wscsl/scripts/pip-leg/screenshot.sh VENV SUITE
set -euo pipefail
venv=$1
suite=$2
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/tensorboard" --logdir "$suite" --host 127.0.0.1 --port "$port" >/tmp/tensorboard.log 2>&1 &
server=$!
trap 'kill $server' EXIT
for _ in $(seq 60); do
  "$venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/data/runs')" 2>/dev/null && break
  sleep 1
done
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1600,1000 \
  --virtual-time-budget=20000 --screenshot=/tmp/tensorboard.png \
  "http://127.0.0.1:$port/?darkMode=false#timeseries&tagFilter=val%2F" >/tmp/chromium.log 2>&1
