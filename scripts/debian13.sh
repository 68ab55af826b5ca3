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
# Usage (as root): scripts/test.sh --debian13 | --debian13-cuda   (which run this script)
#        scripts/debian13.sh [--cuda] --packages   prints the leg's packages and does nothing else
# Environment: WSCSL_DEBIAN13_ROOT (default /var/cache/wscsl/debian13),
#              WSCSL_DEBIAN13_CCACHE (default /var/cache/wscsl/debian13-ccache),
#              WSCSL_DEBIAN13_CUDA_ROOT (default /var/cache/wscsl/debian13-cuda),
#              WSCSL_DEBIAN13_CUDA_CCACHE (default /var/cache/wscsl/debian13-cuda-ccache),
#              WSCSL_DEBIAN13_MIRROR (default: the Debian mirror this machine's apt uses),
#              WSCSL_DEPS_DIR (default /var/cache/wscsl/deps: the dependency prefix and its .tar.xz).
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"

leg=debian13 print_packages=0
for argument in "$@"; do
  case "$argument" in
    --cuda) leg=debian13-cuda ;;
    --packages) print_packages=1 ;;
    *)
      echo "debian13: unknown argument '$argument' (scripts/debian13.sh [--cuda] [--packages])" >&2
      exit 2
      ;;
  esac
done

fail() {
  echo "$leg: $*" >&2
  exit 1
}

if [ "$leg" = debian13 ]; then
  root_variable=WSCSL_DEBIAN13_ROOT
  root="${WSCSL_DEBIAN13_ROOT:-/var/cache/wscsl/debian13}"
  ccache_dir="${WSCSL_DEBIAN13_CCACHE:-/var/cache/wscsl/debian13-ccache}"
  components=main
  torch=(libtorch-dev)
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
)
build_dir="build-$leg"
if [ "$print_packages" -eq 1 ]; then  # docs/reference/systems.md lists them
  printf '%s\n' "${packages[@]}"
  exit 0
fi

# debootstrap, chroot and mount need root; the script installs nothing on this machine but
# debootstrap, and refuses rather than asking for a password halfway.
[ "$(id -u)" -eq 0 ] || fail "this command must run as root (it makes a Debian 13 root with debootstrap and mounts the checkout into it)"
case "$root" in
  /*) ;;
  *) fail "$root_variable must be an absolute path, got '$root'" ;;
esac
case "$root/" in
  "$checkout"/*) fail "the Debian 13 root ($root) must lie outside the checkout ($checkout)" ;;
esac

# The host's own mirror (deb.debian.org unless apt is configured otherwise) serves Debian 13 too.
host_mirror() {
  local uri
  uri="$(grep -hoE '^(URIs: |deb )https?://[^ ]+/debian/?( |$)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | head -n 1 | sed -E 's/^(URIs: |deb )//; s/ *$//')" || true
  echo "${uri:-http://deb.debian.org/debian}"
}
mirror="${WSCSL_DEBIAN13_MIRROR:-$(host_mirror)}"

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "$leg: installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap ||
    fail "debootstrap is missing and could not be installed (apt-get install debootstrap)"
fi

mkdir -p "$(dirname "$root")" "$ccache_dir"
# One run at a time per root: a second one (another checkout, CI) waits instead of mounting over
# the first one's mounts or installing packages beside it.
exec 9>"$root.lock"
if ! flock -n 9; then
  echo "$leg: another run uses $root; waiting for it"
  flock 9
fi

mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" ||
      echo "$leg: could not unmount ${mounted[i]}" >&2
  done
  mounted=()
}
trap unmount_all EXIT
trap 'exit 130' INT TERM
mount_in_root() {  # mount_in_root TARGET_IN_ROOT MOUNT_ARGUMENTS…
  local target="$root$1"
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
  # Where the host's mounts are shared (systemd's default), a bind mount would pass what is
  # mounted on it later (the tmpfs on the root's /dev/shm) on to the original (the host's /dev).
  if [ "$1" = "--bind" ]; then
    mount --make-private "$target"
  fi
}

# Mounts that a killed run left in the root (no run uses them: the lock is this one's) are taken
# away first, so that they neither pile up nor get deleted with an unfinished root.
awk -v prefix="$root/" 'index($2, prefix) == 1 { print $2 }' /proc/self/mounts | sort -r |
  while read -r stale; do
    umount -l "$stale"
  done

# A root is reused only when debootstrap finished making it; an interrupted one is made again,
# after checking that nothing is still mounted inside it (a crashed run's bind mount of a
# checkout would otherwise be deleted with it).
if [ ! -e "$root/.wscsl-debootstrap-done" ]; then
  if [ -e "$root" ]; then
    if grep -qF " $root/" /proc/self/mounts; then
      fail "the unfinished root $root still has something mounted inside it (see findmnt -R $root); unmount it first"
    fi
    rm -rf "$root"
  fi
  echo "$leg: making a Debian 13 root in $root from $mirror"
  debootstrap --variant=minbase --components="$components" trixie "$root" "$mirror" \
    >"$root.debootstrap.log" 2>&1 ||
    fail "debootstrap failed (log: $root.debootstrap.log)"
  touch "$root/.wscsl-debootstrap-done"
fi

# Name resolution for apt, and "localhost" for the tests' rendezvous on loopback.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"

# LibTorch reads /proc and /sys (CPU topology), Python's multiprocessing needs /dev/shm.
mount_in_root /proc -t proc proc
mount_in_root /sys -t sysfs sysfs
mount_in_root /dev --bind /dev
mount_in_root /dev/shm -t tmpfs tmpfs
mount_in_root /wscsl --bind "$checkout"
mount_in_root /var/cache/wscsl-ccache --bind "$ccache_dir"

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# The packages are installed once; the stamp holds the list, so a changed list installs again,
# and removes what the earlier list had and this one has not (with what only they needed).
wanted="${packages[*]}"
installed="$(cat "$root/.wscsl-packages" 2>/dev/null || true)"
if [ "$installed" != "$wanted" ]; then
  unwanted=()
  for p in $installed; do
    case " $wanted " in *" $p "*) ;; *) unwanted+=("$p") ;; esac
  done
  echo "$leg: installing ${#packages[@]} packages and their dependencies"
  if [ "$leg" = debian13-cuda ]; then
    # nvidia-cudnn is only an installer that downloads cuDNN from NVIDIA once its licence is
    # accepted; the leg declines (cudnn-stand-in.sh below says what it uses instead).
    echo "nvidia-cudnn nvidia-cudnn/question select I Decline" |
      in_root debconf-set-selections ||
      fail "could not decline nvidia-cudnn's download in the Debian 13 root (debconf-set-selections)"
  fi
  # A run stopped halfway through installing leaves packages unconfigured; finish them first.
  in_root env DEBIAN_FRONTEND=noninteractive dpkg --configure -a >"$root.apt.log" 2>&1 ||
    fail "dpkg could not finish configuring the packages an earlier run installed (log: $root.apt.log)"
  in_root apt-get update -q >>"$root.apt.log" 2>&1 ||
    fail "apt-get update failed in the Debian 13 root (log: $root.apt.log)"
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${packages[@]}" >>"$root.apt.log" 2>&1 ||
    fail "installing the Debian 13 packages failed (log: $root.apt.log)"
  if [ ${#unwanted[@]} -gt 0 ]; then
    # Marked as installed for another package's sake, they go unless a wanted package needs them
    # (libtorch-dev needs libprotobuf-dev and zlib1g-dev).
    echo "$leg: removing what only ${unwanted[*]} needed"
    in_root apt-mark auto "${unwanted[@]}" >>"$root.apt.log" 2>&1 &&
      in_root env DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -q \
        >>"$root.apt.log" 2>&1 ||
      fail "removing the packages the leg no longer uses failed (log: $root.apt.log)"
  fi
  in_root apt-get clean
  echo "$wanted" >"$root/.wscsl-packages"
fi
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

# The same ccache settings as scripts/build.sh; warnings are errors, as the leg's promise is a
# warning-free build against LibTorch 2.6.
jobs="$(nproc)"
in_root env CCACHE_DIR=/var/cache/wscsl-ccache CCACHE_BASEDIR=/wscsl \
  CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime \
  bash -c "set -euo pipefail
    cd /wscsl
    cmake -S . -B $build_dir ${configure[*]} >/dev/null
    $checks
    cmake --build $build_dir -j $jobs
    cd $build_dir
    ctest --output-on-failure -j $jobs"
