#!/usr/bin/env bash
# Builds wscsl against Debian 13's LibTorch 2.6 (CPU), g++ 14 and OpenCV 4.10, and runs the whole
# test suite there (the parity tests against Debian 13's PyTorch 2.6 and torchvision 0.21
# included), inside a Debian 13 root made with debootstrap on this Debian 12 machine.
#
# The root and its ccache live outside the checkout, at fixed paths, so that every checkout and
# every run shares them: the first run makes the root (a minute) and installs the packages (a few
# minutes); later runs skip both and rebuild incrementally. The checkout is bind-mounted into the
# root and built in its ./build-debian13.
#
# Usage (as root): scripts/test.sh --debian13   (which runs this script)
# Environment: WSCSL_DEBIAN13_ROOT (default /var/cache/wscsl/debian13),
#              WSCSL_DEBIAN13_CCACHE (default /var/cache/wscsl/debian13-ccache),
#              WSCSL_DEBIAN13_MIRROR (default: the Debian mirror this machine's apt uses).
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"
root="${WSCSL_DEBIAN13_ROOT:-/var/cache/wscsl/debian13}"
ccache_dir="${WSCSL_DEBIAN13_CCACHE:-/var/cache/wscsl/debian13-ccache}"

fail() {
  echo "debian13: $*" >&2
  exit 1
}

# Debian 13's equivalents of scripts/setup.sh's packages (binutils: readelf for the SDK test).
packages=(
  g++ cmake make ccache binutils
  libtorch-dev libopenblas0-openmp libgloo-dev
  libboost-dev libtomlplusplus-dev libfmt-dev libcli11-dev zlib1g-dev nlohmann-json3-dev
  libssl-dev libopencv-dev libgtest-dev
  dataset-fashion-mnist
  python3-torch python3-torchvision python3-pil
)

# debootstrap, chroot and mount need root; the script installs nothing on this machine but
# debootstrap, and refuses rather than asking for a password halfway.
[ "$(id -u)" -eq 0 ] || fail "this command must run as root (it makes a Debian 13 root with debootstrap and mounts the checkout into it)"
case "$root" in
  /*) ;;
  *) fail "WSCSL_DEBIAN13_ROOT must be an absolute path, got '$root'" ;;
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
  echo "debian13: installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap ||
    fail "debootstrap is missing and could not be installed (apt-get install debootstrap)"
fi

mkdir -p "$(dirname "$root")" "$ccache_dir"
# One run at a time per root: a second one (another checkout, CI) waits instead of mounting over
# the first one's mounts or installing packages beside it.
exec 9>"$root.lock"
if ! flock -n 9; then
  echo "debian13: another run uses $root; waiting for it"
  flock 9
fi

mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" ||
      echo "debian13: could not unmount ${mounted[i]}" >&2
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
  echo "debian13: making a Debian 13 root in $root from $mirror"
  debootstrap --variant=minbase trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
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

# The packages are installed once; the stamp holds the list, so a changed list installs again.
wanted="${packages[*]}"
if [ "$(cat "$root/.wscsl-packages" 2>/dev/null)" != "$wanted" ]; then
  echo "debian13: installing ${#packages[@]} packages and their dependencies"
  in_root apt-get update -q >"$root.apt.log" 2>&1 ||
    fail "apt-get update failed in the Debian 13 root (log: $root.apt.log)"
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${packages[@]}" >>"$root.apt.log" 2>&1 ||
    fail "installing the Debian 13 packages failed (log: $root.apt.log)"
  in_root apt-get clean
  echo "$wanted" >"$root/.wscsl-packages"
fi

# The same ccache settings as scripts/build.sh; warnings are errors, as the leg's promise is a
# warning-free build against LibTorch 2.6.
jobs="$(nproc)"
in_root env CCACHE_DIR=/var/cache/wscsl-ccache CCACHE_BASEDIR=/wscsl \
  CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime \
  bash -c "set -euo pipefail
    cd /wscsl
    cmake -S . -B build-debian13 -DCMAKE_BUILD_TYPE=Release -DWSCSL_WERROR=ON >/dev/null
    cmake --build build-debian13 -j $jobs
    cd build-debian13
    ctest --output-on-failure -j $jobs"
