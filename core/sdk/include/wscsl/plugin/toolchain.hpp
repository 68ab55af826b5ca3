// The parts of the C++ toolchain and of LibTorch that decide whether two binaries can share C++
// objects and tensors.
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

// The LibTorch build a binary compiles against, "1.13.0 cpu" (Debian 12's headers) or
// "2.1.0 cuda": host and plugins share tensors, modules and allocators, so they must use the same
// one. No LibTorch header says whether it is a CUDA build; WSCSL::sdk defines WSCSL_TORCH_CUDA from
// the Torch CMake package found where the binary is configured (wscsl_torch_cuda in
// WSCSLPluginHelpers.cmake).
#include <torch/version.h>
#ifndef WSCSL_TORCH_CUDA
#error "WSCSL_TORCH_CUDA is not defined: link WSCSL::sdk, which defines it from find_package(Torch)"
#endif
#if WSCSL_TORCH_CUDA
#define WSCSL_TORCH_IDENTITY TORCH_VERSION " cuda"
#else
#define WSCSL_TORCH_IDENTITY TORCH_VERSION " cpu"
#endif
