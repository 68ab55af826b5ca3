#include "l2_distance.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace wscsl::host::search {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// Sixteen floats a step in two accumulators (so that consecutive FMAs do not wait on each other),
// then eight, then one at a time.
__attribute__((target("avx2,fma"))) float l2_avx2(const void* a, const void* b, const void* dim) {
  const float* x = static_cast<const float*>(a);
  const float* y = static_cast<const float*>(b);
  const std::size_t n = *static_cast<const std::size_t*>(dim);
  __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i));
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8));
    sum0 = _mm256_fmadd_ps(d0, d0, sum0);
    sum1 = _mm256_fmadd_ps(d1, d1, sum1);
  }
  if (i + 8 <= n) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i));
    sum0 = _mm256_fmadd_ps(d, d, sum0);
    i += 8;
  }
  const __m256 sum = _mm256_add_ps(sum0, sum1);
  __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  half = _mm_add_ps(half, _mm_movehl_ps(half, half));
  half = _mm_add_ss(half, _mm_shuffle_ps(half, half, 0x55));
  float total = _mm_cvtss_f32(half);
  for (; i < n; ++i) {
    const float d = x[i] - y[i];
    total += d * d;
  }
  return total;
}

}  // namespace

L2Distance simd_l2_distance() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? l2_avx2 : nullptr;
}
#else
L2Distance simd_l2_distance() {
  return nullptr;
}
#endif

}  // namespace wscsl::host::search
