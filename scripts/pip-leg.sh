#!/usr/bin/env bash
# The researchers' install: builds wscsl against PyPI's PyTorch — the CUDA-enabled Linux wheels
# that `pip install torch torchvision` gives — by the README's commands ("Build against your
# PyTorch"), and runs the whole test suite against it, the parity tests against that PyTorch and
# torchvision included, then the GPU run's CPU rehearsal (scripts/gpu_run.sh --device cpu --quick).
#
# It runs in a Debian 12 root made with debootstrap that holds only a compiler, make, ccache and
# python3 with venv, so that nothing of Debian's OpenCV, Boost, fmt, TOML++, GoogleTest, Protocol
# Buffers or LibTorch is there to be found: the virtual environment in the root (/opt/wscsl-venv)
# holds the versions scripts/pip-requirements.txt pins, CMake 4 from PyPI among them (as on the GPU
# machines); the dependency prefix
# (scripts/deps-prefix.sh, made on this machine once, shared with the Debian 13 leg) is mounted at
# /opt/wscsl-deps; this machine's CUDA toolkit (nvcc, which the wheel's CMake package asks for)
# is mounted read-only at /usr/local/cuda. No GPU is needed: every target compiles and links
# against the CUDA wheel, and the suite runs on the CPU. The log shows where each library came
# from (CMake's cache, ldd).
#
# The root, the virtual environment, the downloaded wheels and ccache persist under
# /var/cache/wscsl, so only the first run on a machine downloads (about 3 GB of wheels) and builds
# from scratch; a changed requirements file makes the virtual environment again. The checkout is
# bind-mounted into the root and built in ./build-pip.
#
# Usage (as root): scripts/test.sh --pip   (which runs this script)
#                  scripts/pip-leg.sh --prepare   only make the root and the virtual environment
#                  scripts/pip-leg.sh --run COMMAND   run COMMAND (bash) in the checkout in the root,
#                      as the leg builds: the virtual environment active, the prefix mounted
#                  scripts/pip-leg.sh --screenshot PNG   after a run: TensorBoard, served on loopback
#                      from the root, shows the bench suite of the test tensorboard.tensorboard_reads;
#                      Debian's headless Chromium (installed in the root) takes its picture
# Environment: WSCSL_PIP_ROOT (default /var/cache/wscsl/pip),
#              WSCSL_PIP_CCACHE (default /var/cache/wscsl/pip-ccache),
#              WSCSL_PIP_WHEELS (default /var/cache/wscsl/pip-wheels: the downloaded wheels),
#              WSCSL_DEPS_DIR (default /var/cache/wscsl/deps: the dependency prefix and its .tar.xz),
#              WSCSL_CUDA_TOOLKIT (default /usr/local/cuda; empty: build without nvcc),
#              WSCSL_PIP_MIRROR (default: the Debian mirror this machine's apt uses).
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"
leg=pip

prepare_only=0
screenshot=""
run_command=""
case "${1:-}" in
  "") ;;
  --prepare) prepare_only=1 ;;
  --run)
    [ $# -ge 2 ] || { echo "$leg: --run needs a command" >&2; exit 2; }
    run_command="$2"
    ;;
  --screenshot)
    [ $# -ge 2 ] || { echo "$leg: --screenshot needs the PNG to write" >&2; exit 2; }
    screenshot="$(realpath -m "$2")"
    ;;
  *)
    echo "$leg: unknown argument '$1' (scripts/pip-leg.sh [--prepare | --run COMMAND | --screenshot PNG])" >&2
    exit 2
    ;;
esac

fail() {
  echo "$leg: $*" >&2
  exit 1
}

root="${WSCSL_PIP_ROOT:-/var/cache/wscsl/pip}"
ccache_dir="${WSCSL_PIP_CCACHE:-/var/cache/wscsl/pip-ccache}"
wheels="${WSCSL_PIP_WHEELS:-/var/cache/wscsl/pip-wheels}"
deps_dir="${WSCSL_DEPS_DIR:-/var/cache/wscsl/deps}"
cuda="${WSCSL_CUDA_TOOLKIT-/usr/local/cuda}"
requirements="$checkout/scripts/pip-requirements.txt"
venv=/opt/wscsl-venv
build_dir=build-pip
# What a researcher's machine has besides pip's packages (binutils: readelf for the SDK test;
# Fashion-MNIST: the images of the embedded benchmarks).
packages=(g++ make ccache binutils python3 python3-venv dataset-fashion-mnist)

source "$checkout/scripts/debootstrap-root.sh"
check_root_place "$checkout" WSCSL_PIP_ROOT "a Debian 12 root"
[ -f "$requirements" ] || fail "$requirements is missing"
if [ -n "$cuda" ]; then
  [ -x "$cuda/bin/nvcc" ] ||
    fail "no nvcc in $cuda/bin (the CUDA toolkit the wheel's CMake package needs; WSCSL_CUDA_TOOLKIT names another, or is empty to build without one)"
  cuda="$(realpath "$cuda")"
fi

mirror="${WSCSL_PIP_MIRROR:-$(host_mirror)}"
mkdir -p "$wheels"
take_root
make_root bookworm "$mirror"
enter_root "$checkout" "$ccache_dir"
mount_in_root /var/cache/wscsl-wheels --bind "$wheels"
if [ -n "$cuda" ]; then
  mount_in_root /usr/local/cuda --bind "$cuda" -o ro
fi
install_in_root "${packages[@]}"

# The virtual environment, made again when the requirements change.
phase_start=$(date +%s)
stamp="$(sha256sum "$requirements" | cut -c1-16)"
if [ "$(cat "$root$venv/.wscsl-requirements" 2>/dev/null || true)" != "$stamp" ]; then
  echo "$leg: making the virtual environment $venv from scripts/pip-requirements.txt"
  rm -rf "$root$venv"
  in_root python3 -m venv "$venv" || fail "python3 -m venv $venv failed in the root"
  # The wheels are downloaded into a folder that persists (pip skips those already there), and
  # installed from it alone. pip in the root trusts the certificate authorities this machine's pip
  # trusts (a proxy's included), and uses its index.
  pip_environment=(PIP_DISABLE_PIP_VERSION_CHECK=1)
  ca_bundle="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"
  if [ -f "$ca_bundle" ]; then
    cp "$ca_bundle" "$root/etc/wscsl-pip-ca-certificates.crt"
    pip_environment+=(PIP_CERT=/etc/wscsl-pip-ca-certificates.crt)
  fi
  [ -z "${PIP_INDEX_URL:-}" ] || pip_environment+=(PIP_INDEX_URL="$PIP_INDEX_URL")
  in_root env "${pip_environment[@]}" "$venv/bin/pip" download -q \
    -d /var/cache/wscsl-wheels -r /wscsl/scripts/pip-requirements.txt >"$root.pip.log" 2>&1 ||
    fail "pip download -r scripts/pip-requirements.txt failed (log: $root.pip.log)"
  echo "$leg: wheels downloaded in $(seconds_since "$phase_start") s"
  in_root env "${pip_environment[@]}" "$venv/bin/pip" install -q --no-index \
    --find-links /var/cache/wscsl-wheels -r /wscsl/scripts/pip-requirements.txt \
    >>"$root.pip.log" 2>&1 ||
    fail "pip install -r scripts/pip-requirements.txt failed (log: $root.pip.log)"
  echo "$stamp" >"$root$venv/.wscsl-requirements"
  echo "$leg: virtual environment made in $(seconds_since "$phase_start") s"
fi
in_root "$venv/bin/python" -c 'import torch, torchvision
print(f"pip: PyTorch {torch.__version__} (CUDA {torch.version.cuda}, C++11 ABI {torch.compiled_with_cxx11_abi()}), torchvision {torchvision.__version__}")'
if [ "$prepare_only" = 1 ]; then
  exit 0
fi
if [ -n "$screenshot" ]; then
  suite=/wscsl/$build_dir/tensorboard_reads/suite
  [ -d "$root$suite" ] ||
    fail "$root$suite is missing: run the leg first (its test tensorboard.tensorboard_reads trains the suite)"
  if ! in_root dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      chromium fonts-dejavu-core >>"$root.apt.log" 2>&1 ||
      fail "installing Debian's chromium in the root failed (log: $root.apt.log)"
    in_root apt-get clean
  fi
  # The scalars of the suite's four runs, the validation metrics first.
  in_root bash /wscsl/scripts/pip-leg/screenshot.sh "$venv" "$suite"
  cp "$root/tmp/tensorboard.png" "$screenshot"
  echo "$leg: TensorBoard's page in $screenshot"
  exit 0
fi

# The dependency prefix, made on this machine once (as the Debian 13 leg's).
phase_start=$(date +%s)
(
  flock 8
  "$checkout/scripts/deps-prefix.sh" --out "$deps_dir/wscsl-deps" --work "$deps_dir/work"
) 8>"$deps_dir.lock" || fail "could not make the dependency prefix (scripts/deps-prefix.sh)"
echo "$leg: dependency prefix ready in $(seconds_since "$phase_start") s"
mount_in_root /opt/wscsl-deps --bind "$deps_dir/wscsl-deps" -o ro

# The root has none of Debian's copies of the libraries: a build that found one would fail here.
for header in opencv4 boost fmt toml++ gtest torch google/protobuf; do
  [ ! -e "$root/usr/include/$header" ] || fail "the root has /usr/include/$header; it must have no system copy"
done

# The README's commands, with the virtual environment active and the CUDA toolkit on the PATH, as
# on a researcher's machine; warnings are counted, not errors (the wheel's own headers may warn).
path="$venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
[ -z "$cuda" ] || path="$venv/bin:/usr/local/cuda/bin:${path#"$venv/bin:"}"
in_build_environment=(chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH="$path"
  VIRTUAL_ENV="$venv" CCACHE_DIR=/var/cache/wscsl-ccache
  WSCSL_COMMIT="$(git -C "$checkout" rev-parse --short HEAD 2>/dev/null || echo unknown)")
if [ -n "$run_command" ]; then
  "${in_build_environment[@]}" bash -c "cd /wscsl && $run_command"
  exit
fi
"${in_build_environment[@]}" bash -c 'cd /wscsl && exec scripts/pip-leg/build-and-test.sh "$@"' \
  build-and-test "$venv" "$build_dir" "$(nproc)"
