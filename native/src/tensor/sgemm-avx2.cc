// The AVX2/FMA micro-kernel lives in its own file and is compiled for the portable baseline; only
// this function carries the avx2 target, and sgemm.cc picks it at run time from cpuid.
#include <immintrin.h>

#include "tensor/sgemm.h"

namespace ts {

__attribute__((target("avx2,fma"))) void micro_kernel_avx2(int kc, const float* ap, const float* bp, float* c,
                                                            int ldc, float beta, int mr, int nr) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(bp);
    const __m256 b1 = _mm256_load_ps(bp + 8);
    __m256 a = _mm256_broadcast_ss(ap + 0);
    c00 = _mm256_fmadd_ps(a, b0, c00);
    c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(ap + 1);
    c10 = _mm256_fmadd_ps(a, b0, c10);
    c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(ap + 2);
    c20 = _mm256_fmadd_ps(a, b0, c20);
    c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(ap + 3);
    c30 = _mm256_fmadd_ps(a, b0, c30);
    c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(ap + 4);
    c40 = _mm256_fmadd_ps(a, b0, c40);
    c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(ap + 5);
    c50 = _mm256_fmadd_ps(a, b0, c50);
    c51 = _mm256_fmadd_ps(a, b1, c51);
    ap += kMR;
    bp += kNR;
  }
  const __m256 acc[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (mr == kMR && nr == kNR) {
    const __m256 vb = _mm256_set1_ps(beta);
    for (int i = 0; i < kMR; ++i) {
      float* row = c + static_cast<long>(i) * ldc;
      if (beta == 0.0f) {
        _mm256_storeu_ps(row, acc[i][0]);
        _mm256_storeu_ps(row + 8, acc[i][1]);
      } else {
        _mm256_storeu_ps(row, _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), acc[i][0]));
        _mm256_storeu_ps(row + 8, _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), acc[i][1]));
      }
    }
    return;
  }
  alignas(32) float tmp[kMR * kNR];
  for (int i = 0; i < kMR; ++i) {
    _mm256_store_ps(tmp + i * kNR, acc[i][0]);
    _mm256_store_ps(tmp + i * kNR + 8, acc[i][1]);
  }
  for (int i = 0; i < mr; ++i) {
    float* row = c + static_cast<long>(i) * ldc;
    for (int j = 0; j < nr; ++j) row[j] = beta == 0.0f ? tmp[i * kNR + j] : beta * row[j] + tmp[i * kNR + j];
  }
}

}  // namespace ts
