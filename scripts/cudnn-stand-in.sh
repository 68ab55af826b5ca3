#!/usr/bin/env bash
# Runs inside the CUDA leg's Debian 13 root (scripts/debian13.sh --cuda): makes the libcudnn.so.9
# that Debian's CUDA LibTorch needs to load when NVIDIA's cuDNN is not installed.
#
# Debian's nvidia-cudnn package holds no library: its installer downloads cuDNN from NVIDIA, which
# the leg declines (it reaches only Debian's archive and accepts no licence on the user's behalf).
# libtorch_cuda.so and libtorch_python.so are linked against libcudnn.so.9 with immediate binding,
# so without one no program that links LibTorch starts. The stand-in defines every cuDNN function
# they import, under cuDNN's symbol version; each one says that cuDNN is missing and aborts. cuDNN
# computes only on a GPU, so on a machine without one nothing calls it, and a call would end the
# test that made it rather than pass unnoticed.
#
# A real cuDNN (/usr/lib/<triplet>/libcudnn.so.9, where nvidia-cudnn's installer puts it) wins:
# the stand-in is then removed.
set -euo pipefail
triplet="$(gcc -dumpmachine)"
real="/usr/lib/$triplet/libcudnn.so.9"
stand_in_dir="/usr/local/lib/$triplet"
stand_in="$stand_in_dir/libcudnn.so.9"
# What the stand-in was made from (ldconfig reads every file in the library directory).
stamp_file=/var/lib/wscsl/cudnn-stand-in.stamp

if [ -e "$real" ]; then
  if [ -e "$stand_in" ]; then
    rm -f "$stand_in" "$stamp_file"
    ldconfig
  fi
  exit 0
fi

# The stand-in is made again when LibTorch changes (an upgrade may import other functions).
importers=()
while IFS= read -r -d '' library; do
  if readelf -d "$library" 2>/dev/null | grep -qF '[libcudnn.so.9]'; then
    importers+=("$library")
  fi
done < <(find "/usr/lib/$triplet" /usr/lib/python3/dist-packages -name '*.so*' -type f -print0)
if [ "${#importers[@]}" -eq 0 ]; then
  echo "cudnn-stand-in: no library in this root links libcudnn.so.9, so there is nothing to stand in for" >&2
  exit 1
fi
stamp="$(stat -c '%n %s %Y' "${importers[@]}" | sha256sum | cut -d ' ' -f 1)"
if [ -e "$stand_in" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
nm -D --undefined-only "${importers[@]}" 2>/dev/null |
  sed -nE 's/^ *U (cudnn[A-Za-z0-9_]*)@libcudnn\.so\.9$/\1/p' | sort -u >"$work/functions"
if [ ! -s "$work/functions" ]; then
  echo "cudnn-stand-in: ${importers[*]} link libcudnn.so.9 but import no cudnn* function from it" >&2
  exit 1
fi
{
  cat <<'C'
#include <stdio.h>
#include <stdlib.h>
static void missing(const char* function) {
  fprintf(stderr, "%s: cuDNN is not installed (this libcudnn.so.9 is the stand-in of "
          "scripts/cudnn-stand-in.sh, for machines without a GPU)\n", function);
  abort();
}
C
  while read -r function; do
    echo "void $function(void) { missing(\"$function\"); }"
  done <"$work/functions"
} >"$work/stand_in.c"
{
  echo 'libcudnn.so.9 {'
  echo '  global:'
  sed 's/.*/    &;/' "$work/functions"
  echo '  local: *;'
  echo '};'
} >"$work/stand_in.map"
mkdir -p "$stand_in_dir"
gcc -shared -fPIC -O1 -o "$work/libcudnn.so.9" "$work/stand_in.c" \
  -Wl,-soname,libcudnn.so.9 -Wl,--version-script="$work/stand_in.map"
install -m 0644 "$work/libcudnn.so.9" "$stand_in"
mkdir -p "$(dirname "$stamp_file")"
echo "$stamp" >"$stamp_file"
ldconfig
echo "cudnn-stand-in: made $stand_in ($(wc -l <"$work/functions") functions; cuDNN itself is not installed)"
