#!/usr/bin/env bash
# Builds wscsl against Debian 13's LibTorch 2.6 and g++ 14, and runs the whole test suite there
# (the parity tests against Debian 13's PyTorch 2.6 and torchvision 0.21 included), inside a
# Debian 13 root made with debootstrap on this Debian 12 machine. Two legs, each with its own root,
# ccache and build directory, so that neither disturbs the other:
#   (no argument)  the portable build: a root with a compiler, CMake, ccache, LibTorch 2.6 for the
#                  CPU (libtorch-dev, which brings Protocol Buffers' development files), OpenBLAS,
#                  Fashion-MNIST and the tests' Python packages (--packages lists them), and every
#                  other dependency (OpenCV, Boost, fmt, TOML++, nlohmann-json, CLI11, GoogleTest,
#                  OpenSSL, Gloo's headers) from the dependency prefix that scripts/deps-prefix.sh
#                  makes on this machine (once, in /var/cache/wscsl/deps), in ./build-debian13;
#   --cuda         LibTorch 2.6 for CUDA 12.4 (libtorch-cuda-dev, from contrib) with Debian 13's
#                  CUDA toolkit and NCCL (non-free) and Debian 13's packages of the other
#                  dependencies (OpenCV 4.10), in ./build-debian13-cuda: about 3 GB to download.
#                  Without a GPU the suite runs on the CPU, and the CUDA-specific checks
#                  (device = "cuda", the plugin handshake) see a CUDA LibTorch with no GPU.
#
# The roots and their ccaches live outside the checkout, at fixed paths, so that every checkout and
# every run shares them: the first run of a leg makes its root (a minute) and installs the
# packages (minutes; the CUDA leg's download is the longest part); later runs skip both and
# rebuild incrementally. The checkout is bind-mounted into the root and built in the leg's build
# directory.
#
# Usage (as root): scripts/test.sh --debian13 | --debian13-cuda [--record]   (which run this script;
#                  --record adds the run to docs/legs.tsv, scripts/legs.py)
#        scripts/debian13.sh [--cuda] --packages   prints the leg's packages and does nothing else
# Environment: WSCSL_DEBIAN13_ROOT (default /var/cache/wscsl/debian13),
#              WSCSL_DEBIAN13_CCACHE (default /var/cache/wscsl/debian13-ccache),
#              WSCSL_DEBIAN13_CUDA_ROOT (default /var/cache/wscsl/debian13-cuda),
#              WSCSL_DEBIAN13_CUDA_CCACHE (default /var/cache/wscsl/debian13-cuda-ccache),
#              WSCSL_DEBIAN13_MIRROR (default: the Debian mirror this machine's apt uses),
#              WSCSL_DEPS_DIR (default /var/cache/wscsl/deps: the dependency prefix and its .tar.xz).
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"

leg=debian13 print_packages=0 record=0
for argument in "$@"; do
  case "$argument" in
    --cuda) leg=debian13-cuda ;;
    --packages) print_packages=1 ;;
    --record) record=1 ;;
    *)
      echo "debian13: unknown argument '$argument' (scripts/debian13.sh [--cuda] [--packages] [--record])" >&2
      exit 2
      ;;
  esac
done

fail() {
  echo "$leg: $*" >&2
  exit 1
}
minutes_since() { awk -v a="$1" -v b="$(date +%s)" 'BEGIN { printf "%.1f", (b - a) / 60 }'; }
start=$(date +%s)

if [ "$leg" = debian13 ]; then
  root_variable=WSCSL_DEBIAN13_ROOT
  root="${WSCSL_DEBIAN13_ROOT:-/var/cache/wscsl/debian13}"
  ccache_dir="${WSCSL_DEBIAN13_CCACHE:-/var/cache/wscsl/debian13-ccache}"
  components=main
  torch=(libtorch-dev)
  torch_kind=CPU
  libraries=()
  python_torch=(python3-torch)
  deps_dir="${WSCSL_DEPS_DIR:-/var/cache/wscsl/deps}"
else
  root_variable=WSCSL_DEBIAN13_CUDA_ROOT
  root="${WSCSL_DEBIAN13_CUDA_ROOT:-/var/cache/wscsl/debian13-cuda}"
  ccache_dir="${WSCSL_DEBIAN13_CUDA_CCACHE:-/var/cache/wscsl/debian13-cuda-ccache}"
  # libtorch-cuda-dev, python3-torch-cuda and the Gloo it is built with (which conflicts with the
  # CPU one) are in contrib; the CUDA toolkit that LibTorch's CMake package looks for, and NCCL
  # (the c10d backend for GPUs), are in non-free.
  components=main,contrib,non-free,non-free-firmware
  torch=(libtorch-cuda-dev nvidia-cuda-toolkit libnccl-dev)
  torch_kind="CUDA 12.4"
  libraries=(libgloo-cuda-dev libboost-dev libtomlplusplus-dev libfmt-dev libcli11-dev zlib1g-dev libhnswlib-dev
    nlohmann-json3-dev libssl-dev libopencv-dev libgtest-dev libprotobuf-dev protobuf-compiler)
  python_torch=(python3-torch-cuda)
fi
# Debian 13's equivalents of scripts/setup.sh's packages (binutils: readelf for the SDK test).
packages=(
  g++ cmake make ccache binutils
  "${torch[@]}" libopenblas0-openmp "${libraries[@]}"
  dataset-fashion-mnist
  "${python_torch[@]}" python3-torchvision python3-pil python3-protobuf python3-crc32c
  python3-venv python3-sklearn python3-tqdm
)
build_dir="build-$leg"
if [ "$print_packages" -eq 1 ]; then  # docs/reference/systems.md lists them
  printf '%s\n' "${packages[@]}"
  exit 0
fi

# The script installs nothing on this machine but debootstrap.
source "$checkout/scripts/debootstrap-root.sh"
check_root_place "$checkout" "$root_variable" "a Debian 13 root"
mirror="${WSCSL_DEBIAN13_MIRROR:-$(host_mirror)}"
take_root
make_root trixie "$mirror" --components="$components"
enter_root "$checkout" "$ccache_dir"
if [ "$leg" = debian13-cuda ]; then
  # nvidia-cudnn is only an installer that downloads cuDNN from NVIDIA once its licence is
  # accepted; the leg declines (cudnn-stand-in.sh below says what it uses instead).
  echo "nvidia-cudnn nvidia-cudnn/question select I Decline" |
    in_root debconf-set-selections ||
    fail "could not decline nvidia-cudnn's download in the Debian 13 root (debconf-set-selections)"
fi
install_in_root "${packages[@]}"
if [ "$leg" = debian13-cuda ]; then
  in_root bash /wscsl/scripts/cudnn-stand-in.sh ||
    fail "could not provide the libcudnn.so.9 that the CUDA LibTorch loads (scripts/cudnn-stand-in.sh)"
fi

configure=(-DCMAKE_BUILD_TYPE=Release -DWSCSL_WERROR=ON)
if [ "$leg" = debian13 ]; then
  # The portable build: what the root lacks comes from the dependency prefix, made on this machine
  # and mounted where the root sees it. The build must have taken OpenCV, Boost, fmt and TOML++
  # from it, not from a package the root gained through some dependency.
  "$checkout/scripts/deps-prefix.sh" --out "$deps_dir/wscsl-deps" --work "$deps_dir/work" ||
    fail "could not make the dependency prefix (scripts/deps-prefix.sh)"
  mount_in_root /opt/wscsl-deps --bind "$deps_dir/wscsl-deps" -o ro
  configure+=(-DWSCSL_DEPS_PREFIX=/opt/wscsl-deps)
  checks="for found in OpenCV_DIR Boost_DIR fmt_DIR tomlplusplus_DIR GTest_DIR; do
      grep -q \"^\$found:PATH=/opt/wscsl-deps/\" $build_dir/CMakeCache.txt ||
        { echo \"$leg: the build did not take \$found from the dependency prefix\" >&2; exit 1; }
    done"
else
  checks=true
fi

# The root's own ccache (CMakeLists.txt gives ccache its settings); warnings are errors, as the
# leg's promise is a warning-free build against LibTorch 2.6.
jobs="$(nproc)"
build_start=$(date +%s)
in_root env CCACHE_DIR=/var/cache/wscsl-ccache \
  bash -c "set -euo pipefail
    cd /wscsl
    cmake -S . -B $build_dir ${configure[*]} >/dev/null
    $checks
    cmake --build $build_dir -j $jobs"
build_minutes=$(minutes_since "$build_start")
suite_start=$(date +%s)
status=0  # a failed suite is recorded too, and then fails the command
in_root bash -c "cd /wscsl/$build_dir && ctest --output-on-failure -j $jobs --output-junit junit.xml" ||
  status=$?
suite_minutes=$(minutes_since "$suite_start")
echo "$leg: built in $build_minutes minutes, the suite in $suite_minutes, $(minutes_since "$start") in all"
if [ "$record" = 1 ]; then
  version="$(in_root dpkg-query -W -f='${Version}' "${torch[0]}")"
  "$checkout/scripts/legs.py" record "$leg" --junit "$checkout/$build_dir/junit.xml" \
    --libtorch "${version%%+*} $torch_kind (Debian 13)" \
    --build-minutes "$build_minutes" --suite-minutes "$suite_minutes" \
    --total-minutes "$(minutes_since "$start")"
fi
exit $status
