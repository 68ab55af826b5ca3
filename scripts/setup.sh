#!/usr/bin/env bash
# Installs wscsl's build and run dependencies from Debian 12's archive. Idempotent: it does
# nothing (and needs no network) when everything is already installed.
# Usage: scripts/setup.sh [test | fuzz | deps-prefix] [--packages]
#   test:        also what only the test suite uses (scripts/test.sh): Slurm and munge, whose
#                daemons the launch tests start on their own scratch configuration, and the
#                Python packages pytorch-metric-learning imports
#   fuzz:        also clang and its libFuzzer and sanitizer runtimes
#   deps-prefix: only the tools scripts/deps-prefix.sh builds the dependency prefix with
#   --packages:  print the packages, one a line, and install nothing (docs/reference/systems.md)
set -euo pipefail

packages=(
  g++ cmake make ccache
  libtorch-dev libopenblas0-openmp       # LibTorch; OpenBLAS instead of the 18× slower reference BLAS
  libgloo-dev                            # Gloo headers for c10d's CPU process group (--nproc)
  libboost-dev                           # Boost.DLL (header-only with BOOST_DLL_USE_STD_FS)
  libtomlplusplus-dev libfmt-dev libcli11-dev zlib1g-dev nlohmann-json3-dev
  libhnswlib-dev                         # the approximate index of `wscsl search` (header-only)
  libssl-dev                             # SHA-256 of checkpoints (OpenSSL's libcrypto)
  libprotobuf-dev protobuf-compiler      # TensorBoard's event files
  libopencv-dev libgtest-dev
  dataset-fashion-mnist                  # the images of the embedded Fashion-CRB benchmark
  python3-torch python3-torchvision python3-pil  # parity tests against torchvision and PIL;
                                         # scripts/convert-weights.py; the launch tests' torchrun
  python3-protobuf python3-crc32c        # the test's own reader of the event files
)
mode="" print_packages=0
for argument in "$@"; do
  case "$argument" in
    --packages) print_packages=1 ;;
    *) mode=$argument ;;
  esac
done
case "$mode" in
  "") ;;
  # The launch tests' one-machine Slurm cluster (srun); what PyPI's pytorch-metric-learning
  # imports, and the venv it is installed into, for the retrieval metrics' parity test
  # (scripts/pml-venv.sh); Chromium, driven over the DevTools protocol, for explore.browser.
  test) packages+=(slurmctld slurmd slurm-client munge python3-venv python3-sklearn python3-tqdm
    chromium python3-websocket) ;;
  fuzz) packages+=(clang libclang-rt-14-dev) ;;
  deps-prefix) packages=(g++ cmake ninja-build nasm dpkg-dev xz-utils) ;;
  *)
    echo "setup: unknown argument '$mode' (scripts/setup.sh [test | fuzz | deps-prefix] [--packages])" >&2
    exit 2
    ;;
esac
if [ "$print_packages" -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "setup: these packages are missing and this user is not root (and has no sudo):" >&2
    echo "  ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
