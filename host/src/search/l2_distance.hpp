// The squared Euclidean distance the HNSW graphs are built and searched with, in AVX2 with FMA.
// Debian's hnswlib is header-only and compiled here without -march flags, so its own distance is
// the SSE one; PyPI's hnswlib, which pip compiles for the machine it installs on, uses AVX. This
// one is chosen at run time where the CPU has AVX2 and FMA, so that the binary still runs on any
// x86-64 (and elsewhere hnswlib's own serves).
#pragma once

#include <cstddef>

namespace wscsl::host::search {

// hnswlib's calling convention: the two vectors, then a pointer to their dimension (a size_t).
using L2Distance = float (*)(const void*, const void*, const void*);

// The AVX2 + FMA distance, or nullptr where the CPU lacks either.
L2Distance simd_l2_distance();

}  // namespace wscsl::host::search
