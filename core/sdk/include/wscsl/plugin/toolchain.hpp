// The parts of the C++ toolchain that decide whether two binaries can share C++ objects.
#pragma once

#define WSCSL_DETAIL_STR2(x) #x
#define WSCSL_DETAIL_STR(x) WSCSL_DETAIL_STR2(x)

#if defined(__clang__)
#define WSCSL_TOOLCHAIN_COMPILER "clang-" WSCSL_DETAIL_STR(__clang_major__)
#elif defined(__GNUC__)
#define WSCSL_TOOLCHAIN_COMPILER "gcc-" WSCSL_DETAIL_STR(__GNUC__)
#else
#define WSCSL_TOOLCHAIN_COMPILER "unknown"
#endif

#include <cstddef>  // defines the standard-library identification macros below
#if defined(_LIBCPP_VERSION)
#define WSCSL_TOOLCHAIN_STDLIB "libc++"
#elif defined(__GLIBCXX__)
#define WSCSL_TOOLCHAIN_STDLIB "libstdc++"
#else
#define WSCSL_TOOLCHAIN_STDLIB "unknown-stdlib"
#endif

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define WSCSL_TOOLCHAIN_CXX11ABI "cxx11abi=" WSCSL_DETAIL_STR(_GLIBCXX_USE_CXX11_ABI)
#else
#define WSCSL_TOOLCHAIN_CXX11ABI "cxx11abi=n/a"
#endif

// "gcc-12;libstdc++;cxx11abi=1". The compiler token only warns on mismatch; the standard library
// and its ABI must match exactly.
#define WSCSL_TOOLCHAIN_FINGERPRINT \
  WSCSL_TOOLCHAIN_COMPILER ";" WSCSL_TOOLCHAIN_STDLIB ";" WSCSL_TOOLCHAIN_CXX11ABI
