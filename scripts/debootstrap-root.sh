# The debootstrapped roots the Debian 13 legs (scripts/debian13.sh) and the pip leg
# (scripts/pip-leg.sh) build in: made once, reused, locked for one run at a time, with the checkout
# and a ccache mounted into them. Sourced, not run; the caller sets `leg` (the name its messages
# start with), `root` (an absolute path outside the checkout) and defines `fail`.

seconds_since() { echo $(($(date +%s) - $1)); }

# check_root_place <checkout> <variable naming the root> <what the root holds>: refuses, before
# anything is made or mounted, a caller that is not root (debootstrap, chroot and mount need it:
# the legs refuse rather than ask for a password halfway), and a root path that is relative or
# inside the checkout.
check_root_place() {
  local checkout=$1 variable=$2 what=$3
  [ "$(id -u)" -eq 0 ] || fail "this command must run as root (it makes $what with debootstrap and mounts the checkout into it)"
  case "$root" in
    /*) ;;
    *) fail "$variable must be an absolute path, got '$root'" ;;
  esac
  case "$root/" in
    "$checkout"/*) fail "the root ($root) must lie outside the checkout ($checkout)" ;;
  esac
}

# The host's own mirror (deb.debian.org unless apt is configured otherwise) serves every release.
host_mirror() {
  local uri
  uri="$(grep -hoE '^(URIs: |deb )https?://[^ ]+/debian/?( |$)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | head -n 1 | sed -E 's/^(URIs: |deb )//; s/ *$//')" || true
  echo "${uri:-http://deb.debian.org/debian}"
}

# Takes the root for this run: installs debootstrap if it is missing, waits for another run of the
# same root (another checkout, CI) instead of mounting over its mounts or installing beside it,
# unmounts everything this run mounts when it ends, and takes away the mounts a killed run left
# (no run uses them: the lock is this one's), so that they neither pile up nor get deleted with an
# unfinished root.
take_root() {
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "$leg: installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap ||
      fail "debootstrap is missing and could not be installed (apt-get install debootstrap)"
  fi
  mkdir -p "$(dirname "$root")"
  exec 9>"$root.lock"
  if ! flock -n 9; then
    echo "$leg: another run uses $root; waiting for it"
    flock 9
  fi
  mounted=()
  trap unmount_all EXIT
  trap 'exit 130' INT TERM
  awk -v prefix="$root/" 'index($2, prefix) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r stale; do
      umount -l "$stale"
    done
}

unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" ||
      echo "$leg: could not unmount ${mounted[i]}" >&2
  done
  mounted=()
}

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

# make_root SUITE MIRROR [DEBOOTSTRAP OPTIONS…]: a root is reused only when debootstrap finished
# making it; an interrupted one is made again, after checking that nothing is still mounted inside
# it (a crashed run's bind mount of a checkout would otherwise be deleted with it).
make_root() {
  local suite=$1 mirror=$2 start
  shift 2
  [ -e "$root/.wscsl-debootstrap-done" ] && return 0
  if [ -e "$root" ]; then
    if grep -qF " $root/" /proc/self/mounts; then
      fail "the unfinished root $root still has something mounted inside it (see findmnt -R $root); unmount it first"
    fi
    rm -rf "$root"
  fi
  start=$(date +%s)
  echo "$leg: making a $suite root in $root from $mirror"
  debootstrap --variant=minbase "$@" "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    fail "debootstrap failed (log: $root.debootstrap.log)"
  touch "$root/.wscsl-debootstrap-done"
  echo "$leg: root made in $(seconds_since "$start") s"
}

# enter_root CHECKOUT CCACHE_DIR: name resolution for apt and "localhost" for the tests'
# rendezvous on loopback; /proc and /sys (LibTorch reads the CPU topology), /dev and /dev/shm
# (Python's multiprocessing); the checkout at /wscsl and the ccache at /var/cache/wscsl-ccache.
enter_root() {
  mkdir -p "$2"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp /etc/hosts "$root/etc/hosts"
  mount_in_root /proc -t proc proc
  mount_in_root /sys -t sysfs sysfs
  mount_in_root /dev --bind /dev
  mount_in_root /dev/shm -t tmpfs tmpfs
  mount_in_root /wscsl --bind "$1"
  mount_in_root /var/cache/wscsl-ccache --bind "$2"
}

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# install_in_root PACKAGE…: installed once; the stamp holds the list, so a changed list installs
# again, and removes what the earlier list had and this one has not (with what only they needed).
install_in_root() {
  local wanted="$*" installed start p
  local unwanted=()
  installed="$(cat "$root/.wscsl-packages" 2>/dev/null || true)"
  [ "$installed" = "$wanted" ] && return 0
  for p in $installed; do
    case " $wanted " in *" $p "*) ;; *) unwanted+=("$p") ;; esac
  done
  start=$(date +%s)
  echo "$leg: installing $# packages and their dependencies"
  # A run stopped halfway through installing leaves packages unconfigured; finish them first.
  in_root env DEBIAN_FRONTEND=noninteractive dpkg --configure -a >"$root.apt.log" 2>&1 ||
    fail "dpkg could not finish configuring the packages an earlier run installed (log: $root.apt.log)"
  in_root apt-get update -q >>"$root.apt.log" 2>&1 ||
    fail "apt-get update failed in the root (log: $root.apt.log)"
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "$@" >>"$root.apt.log" 2>&1 ||
    fail "installing the root's packages failed (log: $root.apt.log)"
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
  echo "$leg: packages installed in $(seconds_since "$start") s"
}
