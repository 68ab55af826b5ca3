#!/usr/bin/env bash
# Makes the dependency prefix: everything wscsl needs besides a compiler, CMake and a LibTorch,
# built from Debian 12's packages into one relocatable folder, so that wscsl builds against a
# PyTorch from pip or conda on a machine that has none of its other dependencies (no root needed
# there). Run once on a Debian 12 machine; copy the folder (or its .tar.xz) anywhere, then
#   scripts/build.sh --torch python --deps <prefix>
# It holds (docs/distributed.md, "Build against your PyTorch"):
#   built from Debian's source packages, static, position-independent: zlib, libpng, libjpeg-turbo,
#     OpenCV (core, imgproc, imgcodecs with JPEG and PNG only), fmt, GoogleTest; and the header-only
#     TOML++, nlohmann-json, CLI11, hnswlib;
#   from Debian's binary packages: the Boost headers Boost.DLL, Boost.CRC and Boost.Beast need, OpenSSL's static
#     libcrypto, Protocol Buffers (headers, static library, protoc) and Gloo's headers, those of
#     Debian 12 for LibTorch 1.x and those of Debian 13 for LibTorch 2.x.
# It runs on any x86-64 Linux with glibc 2.36 or later (Debian 12's) and the C++ library of g++ 12
# or later. Every library uses the C++11 ABI, as the LibTorch wscsl builds against must.
# Usage: scripts/deps-prefix.sh [--out DIR] [--work DIR] [--jobs N]
#   --out   the prefix to make (default: ./deps/wscsl-deps); DIR.tar.xz is written beside it
#   --work  where sources are downloaded and built (default: ./deps/work; emptied at the end)
# Running it again with the same script and output does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$PWD"
out="$PWD/deps/wscsl-deps"
work="$PWD/deps/work"
jobs="$(nproc)"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$(realpath -m "$2")"; shift 2 ;;
    --work) work="$(realpath -m "$2")"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    *)
      echo "deps-prefix: unknown argument '$1' (scripts/deps-prefix.sh [--out DIR] [--work DIR] [--jobs N])" >&2
      exit 2
      ;;
  esac
done

fail() {
  echo "deps-prefix: $*" >&2
  exit 1
}

# The stamp names this script's contents: a prefix made by another version of it is made again.
stamp="$(sha256sum "$checkout/scripts/deps-prefix.sh" | cut -c1-16)"
if [ "$(cat "$out/.wscsl-deps-stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$out.tar.xz" ]; then
  echo "deps-prefix: $out is up to date"
  exit 0
fi
grep -q '^VERSION_CODENAME=bookworm' /etc/os-release ||
  fail "the prefix is made from Debian 12's packages, on Debian 12 (this is $(. /etc/os-release; echo "$PRETTY_NAME"))"
"$checkout/scripts/setup.sh" deps-prefix

# A private apt configuration: the source and binary indexes of Debian 12, and Debian 13's binary
# index for its Gloo headers, downloaded as this user, without touching the system's lists.
apt_dir="$work/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
cat >"$apt_dir/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian trixie main
EOF
apt_options=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
  -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=1)
apt-get "${apt_options[@]}" update -q >"$work/apt.log" 2>&1 ||
  fail "apt-get update failed for Debian's package indexes (log: $work/apt.log)"

# source_dir <package>: the unpacked Debian source package (its patches applied) in
# $work/src/<package>; its .dsc name (the version) in $work/src/<package>.version.
source_dir() {
  local dir="$work/src/$1" download="$work/src/$1.download"
  if [ ! -f "$dir/.unpacked" ]; then
    rm -rf "$dir" "$download"
    mkdir -p "$download"
    (cd "$download" && apt-get "${apt_options[@]}" source -q "$1" >>"$work/apt.log" 2>&1) ||
      fail "apt-get source $1 failed (log: $work/apt.log)"
    basename "$(find "$download" -maxdepth 1 -name '*.dsc' | head -n 1)" .dsc >"$work/src/$1.version"
    mv "$(find "$download" -mindepth 1 -maxdepth 1 -type d | head -n 1)" "$dir"
    rm -rf "$download"
    touch "$dir/.unpacked"
  fi
  echo "$dir"
}

# unpack_binary <package>[/<release>]: the binary package unpacked in $work/deb/<package>[-release];
# its file name (the version) in $work/deb/<package>[-release].version.
unpack_binary() {
  local dir="$work/deb/${1//\//-}" download="$work/deb/${1//\//-}.download"
  if [ ! -f "$dir/.unpacked" ]; then
    rm -rf "$dir" "$download"
    mkdir -p "$dir" "$download"
    (cd "$download" && apt-get "${apt_options[@]}" download -q "$1" >>"$work/apt.log" 2>&1) ||
      fail "apt-get download $1 failed (log: $work/apt.log)"
    dpkg-deb -x "$download"/*.deb "$dir"
    basename "$download"/*.deb .deb >"$dir.version"
    rm -rf "$download"
    touch "$dir/.unpacked"
  fi
  echo "$dir"
}

stage="$out.tmp"
rm -rf "$stage"
mkdir -p "$stage/include" "$stage/lib" "$stage/bin"
cflags="-O2 -fPIC -fvisibility=hidden"
# cmake_install <source folder> <cmake options...>: configures, builds and installs into the stage
# (a run stopped halfway resumes the build where it stopped).
cmake_install() {
  local src="$1"
  shift
  local build="$work/build/$(basename "$src")"
  mkdir -p "$work/build"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$stage" \
    -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_C_FLAGS="$cflags" -DCMAKE_CXX_FLAGS="$cflags" -DBUILD_SHARED_LIBS=OFF "$@" \
    >"$build.log" 2>&1 || fail "configuring $(basename "$src") failed (log: $build.log)"
  cmake --build "$build" -j "$jobs" >>"$build.log" 2>&1 ||
    fail "building $(basename "$src") failed (log: $build.log)"
  cmake --install "$build" >>"$build.log" 2>&1 ||
    fail "installing $(basename "$src") failed (log: $build.log)"
}

echo "deps-prefix: building zlib, libpng, libjpeg-turbo"
# Debian's zlib source has no Windows resources, which zlib's CMake build needs: its configure.
rm -rf "$work/build/zlib" && mkdir -p "$work/build" && cp -r "$(source_dir zlib)" "$work/build/zlib"
(cd "$work/build/zlib" && CFLAGS="$cflags" ./configure --static --prefix="$stage" &&
  make -j "$jobs" install) >"$work/build/zlib.log" 2>&1 ||
  fail "building zlib failed (log: $work/build/zlib.log)"
cmake_install "$(source_dir libpng1.6)" -DPNG_SHARED=OFF -DPNG_TESTS=OFF -DPNG_EXECUTABLES=OFF \
  -DZLIB_ROOT="$stage" -DZLIB_LIBRARY="$stage/lib/libz.a" -DZLIB_INCLUDE_DIR="$stage/include"
# libjpeg-turbo takes a relative library folder as relative to the working folder.
cmake_install "$(source_dir libjpeg-turbo)" -DENABLE_SHARED=OFF -DWITH_TURBOJPEG=OFF \
  -DWITH_JPEG8=OFF -DREQUIRE_SIMD=ON -DCMAKE_INSTALL_LIBDIR="$stage/lib"
for library in libz.a libpng16.a libjpeg.a; do
  [ -f "$stage/lib/$library" ] || fail "$library was not installed into $stage/lib"
done

echo "deps-prefix: building OpenCV (core, imgproc, imgcodecs)"
opencv_off=()
for feature in TIFF WEBP OPENJPEG JASPER OPENEXR GDAL GDCM IPP ITT OPENCL EIGEN LAPACK TBB OPENMP \
  PROTOBUF QUIRC ADE VA VA_INTEL GTK QT FFMPEG GSTREAMER V4L 1394 CUDA VTK IMGCODEC_HDR \
  IMGCODEC_SUNRASTER IMGCODEC_PXM IMGCODEC_PFM AVIF OPENVX HALIDE VULKAN ONNX; do
  opencv_off+=("-DWITH_$feature=OFF")
done
cmake_install "$(source_dir opencv)" -DBUILD_LIST=core,imgproc,imgcodecs "${opencv_off[@]}" \
  -DWITH_JPEG=ON -DWITH_PNG=ON -DBUILD_JPEG=OFF -DBUILD_PNG=OFF -DBUILD_ZLIB=OFF \
  -DJPEG_LIBRARY="$stage/lib/libjpeg.a" -DJPEG_INCLUDE_DIR="$stage/include" \
  -DPNG_LIBRARY="$stage/lib/libpng16.a" -DPNG_PNG_INCLUDE_DIR="$stage/include" \
  -DZLIB_LIBRARY="$stage/lib/libz.a" -DZLIB_INCLUDE_DIR="$stage/include" \
  -DBUILD_TESTS=OFF -DBUILD_PERF_TESTS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_opencv_apps=OFF \
  -DBUILD_DOCS=OFF -DBUILD_JAVA=OFF -DBUILD_opencv_python3=OFF -DBUILD_opencv_python2=OFF \
  -DOPENCV_GENERATE_PKGCONFIG=OFF -DINSTALL_PKGCONFIG=OFF -DOPENCV_FORCE_3RDPARTY_BUILD=OFF \
  -DCPU_DISPATCH="" -DOPENCV_CONFIG_INSTALL_PATH=lib/cmake/opencv4 \
  -DOPENCV_LIB_INSTALL_PATH=lib -DOPENCV_3P_LIB_INSTALL_PATH=lib
# OpenCV's configuration names the image libraries by their absolute paths in the stage: make them
# relative to the configuration file, so that the prefix can move.
sed -i "s|$stage/|\${_IMPORT_PREFIX}/|g" "$stage"/lib/cmake/opencv4/OpenCVModules*.cmake
! grep -rq "$stage" "$stage/lib/cmake/opencv4" ||
  fail "OpenCV's CMake configuration still names the staging folder $stage"

echo "deps-prefix: building fmt, GoogleTest, nlohmann-json, CLI11; adding TOML++"
cmake_install "$(source_dir fmtlib)" -DFMT_TEST=OFF -DFMT_DOC=OFF
cmake_install "$(source_dir googletest)" -DBUILD_GMOCK=OFF
cmake_install "$(source_dir nlohmann-json3)" -DJSON_BuildTests=OFF -DJSON_Install=ON
cmake_install "$(source_dir cli11)" -DCLI11_BUILD_TESTS=OFF -DCLI11_BUILD_EXAMPLES=OFF \
  -DCLI11_BUILD_DOCS=OFF

# TOML++ (its source package is not in the archive's pool): the binary package's headers, used
# header-only, as its CMake configuration offers when told the library is not compiled.
toml="$(unpack_binary libtomlplusplus-dev/bookworm)"
cp -r "$toml/usr/include/toml++" "$stage/include/"
mkdir -p "$stage/lib/cmake/tomlplusplus"
cp "$toml"/usr/lib/x86_64-linux-gnu/cmake/tomlplusplus/*.cmake "$stage/lib/cmake/tomlplusplus/"
sed -i 's|if (True)|if (FALSE)|; s|"${CMAKE_CURRENT_LIST_DIR}/../../../.."|"${CMAKE_CURRENT_LIST_DIR}/../../.."|' \
  "$stage/lib/cmake/tomlplusplus/tomlplusplusConfig.cmake"

echo "deps-prefix: adding Boost's headers, OpenSSL, Protocol Buffers and Gloo's headers"
# Boost: only the headers that wscsl's includes reach (Boost.DLL with std::filesystem, Boost.CRC,
# and Boost.Beast with the Asio it is built on, for `wscsl explore`'s server).
boost="$(unpack_binary libboost1.74-dev/bookworm)"
printf '#include <boost/%s>\n' crc.hpp dll/library_info.hpp dll/runtime_symbol_info.hpp \
  dll/shared_library.hpp asio/ip/tcp.hpp asio/signal_set.hpp asio/strand.hpp beast/core.hpp \
  beast/http.hpp >"$work/boost_probe.cpp"
# (-M, not -MM: Boost's configuration headers declare themselves system headers, and -MM leaves
# out whatever they include.)
boost_headers() {  # boost_headers <include folder>: the Boost headers the probe includes from it
  g++ -std=c++17 -DBOOST_DLL_USE_STD_FS -I"$1" -M "$work/boost_probe.cpp" |
    tr ' \\' '\n\n' | grep "/boost/" | sort -u
}
boost_headers "$boost/usr/include" | grep "^$boost/usr/include/boost/" >"$work/boost_headers.txt" ||
  fail "no Boost header was found for Boost.DLL, Boost.CRC and Boost.Beast"
(cd "$boost/usr/include" && sed "s|^$boost/usr/include/||" "$work/boost_headers.txt" |
  xargs cp --parents -t "$stage/include")
if boost_headers "$stage/include" | grep -v "^$stage/include/boost/"; then
  fail "the prefix lacks the Boost headers above, which Boost.DLL, Boost.CRC or Boost.Beast include"
fi
mkdir -p "$stage/lib/cmake"
cp -r "$boost/usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0" \
  "$boost/usr/lib/x86_64-linux-gnu/cmake/boost_headers-1.74.0" \
  "$boost/usr/lib/x86_64-linux-gnu/cmake/BoostDetectToolset-1.74.0.cmake" "$stage/lib/cmake/"
# Debian's configuration finds the headers three folders above itself; here they are two.
sed -i 's|/\.\./\.\./\.\./include/|/../../include/|' \
  "$stage/lib/cmake/boost_headers-1.74.0/boost_headers-config.cmake"

# OpenSSL's libcrypto, static and position-independent as Debian builds it (SHA-256 of checkpoints).
ssl="$(unpack_binary libssl-dev/bookworm)"
cp -r "$ssl/usr/include/openssl" "$stage/include/"
cp "$ssl"/usr/include/x86_64-linux-gnu/openssl/*.h "$stage/include/openssl/"
cp "$ssl/usr/lib/x86_64-linux-gnu/libcrypto.a" "$stage/lib/"

# Protocol Buffers (TensorBoard's event files): the headers, the well-known .proto files and the
# static library, linked only into executables; and protoc, in libexec/ (it finds the well-known
# .proto files in ../include), run through a wrapper that gives it its own shared libraries.
protobuf="$(unpack_binary libprotobuf-dev/bookworm)"
cp -r "$protobuf/usr/include/google" "$stage/include/"
[ -f "$stage/include/google/protobuf/struct.proto" ] ||
  fail "libprotobuf-dev lacks the well-known .proto files (google/protobuf/struct.proto)"
cp "$protobuf/usr/lib/x86_64-linux-gnu/libprotobuf.a" "$stage/lib/"
mkdir -p "$stage/lib/protoc" "$stage/libexec"
cp "$(unpack_binary protobuf-compiler/bookworm)/usr/bin/protoc" "$stage/libexec/"
cp -L "$(unpack_binary libprotoc32/bookworm)"/usr/lib/x86_64-linux-gnu/libprotoc.so.32 \
  "$(unpack_binary libprotobuf32/bookworm)"/usr/lib/x86_64-linux-gnu/libprotobuf.so.32 "$stage/lib/protoc/"
cat >"$stage/bin/protoc" <<'EOF'
#!/bin/sh
prefix="$(dirname "$(readlink -f "$0")")/.."
LD_LIBRARY_PATH="$prefix/lib/protoc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$prefix/libexec/protoc" "$@"
EOF
chmod +x "$stage/bin/protoc"
printf 'syntax = "proto3";\nimport "google/protobuf/struct.proto";\nmessage M { google.protobuf.Struct s = 1; }\n' \
  >"$work/probe.proto"
"$stage/bin/protoc" -I"$work" --cpp_out="$work" "$work/probe.proto" ||
  fail "the prefix's protoc does not compile a .proto that imports a well-known type"

# Gloo's headers, which c10d's headers include and PyTorch's wheels do not ship: Debian 12's
# (what its LibTorch 1.13 is built with) and Debian 13's (its LibTorch 2.6; PyTorch 2.11's wheel
# builds against them too).
mkdir -p "$stage/gloo/torch-1" "$stage/gloo/torch-2"
# hnswlib (the approximate index of `wscsl search`): header-only, the binary package's headers.
cp -r "$(unpack_binary libhnswlib-dev/bookworm)/usr/include/hnswlib" "$stage/include/"

cp -r "$(unpack_binary libgloo-dev/bookworm)/usr/include/gloo" "$stage/gloo/torch-1/"
cp -r "$(unpack_binary libgloo-dev/trixie)/usr/include/gloo" "$stage/gloo/torch-2/"

# Each package's copyright and licence, as Debian records it.
for dir in "$work"/src/*/ "$work"/deb/*/; do
  name="$(basename "$dir")"
  copyright=""
  linked=""
  for doc in "${dir}debian" "$dir"usr/share/doc/*; do
    if [ -f "$doc/copyright" ]; then
      copyright="$doc/copyright"
      break
    elif [ -L "$doc" ]; then
      linked=yes  # a -dev package's documentation is its library package's, also taken
    fi
  done
  if [ -z "$copyright" ]; then
    [ -n "$linked" ] || fail "$name has no Debian copyright file"
    continue
  fi
  mkdir -p "$stage/share/licenses/$name"
  cp "$copyright" "$stage/share/licenses/$name/copyright"
done

# What came from where, for the record.
{
  echo "wscsl dependency prefix, made $(date -u +%Y-%m-%dT%H:%MZ) by scripts/deps-prefix.sh ($stamp)"
  echo "built from Debian's source packages:"
  sed 's/^/  /' "$work"/src/*.version
  echo "taken from Debian's binary packages:"
  sed 's/^/  /' "$work"/deb/*.version
} >"$stage/MANIFEST"
# Only what a build uses: no tools of the image libraries, OpenCV's cascades or manuals.
rm -rf "$stage/share/doc" "$stage/share/man" "$stage/lib/pkgconfig" "$stage/share/pkgconfig" \
  "$stage/share/opencv4" "$stage/lib/libpng" "$stage/bin"/{cjpeg,djpeg,jpegtran,rdjpgcom,wrjpgcom} \
  "$stage/bin"/libpng*-config "$stage/bin/setup_vars_opencv4.sh"
echo "$stamp" >"$stage/.wscsl-deps-stamp"

rm -rf "$out" "$out.tar.xz"
mv "$stage" "$out"
XZ_OPT=-T0 tar -C "$(dirname "$out")" -cJf "$out.tar.xz.tmp" "$(basename "$out")"
mv "$out.tar.xz.tmp" "$out.tar.xz"
rm -rf "$work/src" "$work/deb" "$work/build"
echo "deps-prefix: made $out ($(du -sh "$out" | cut -f1); packed $(du -sh "$out.tar.xz" | cut -f1))"
