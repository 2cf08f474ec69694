#pragma once
// Our own packed, cache-blocked sgemm (BLIS-style: B packed in 16-wide strips per K block, A packed
// in 6-row strips per task, a 6x16 register micro-kernel). It is the engine's only gemm unless the
// device was created with gemm 'blas' on a build that found OpenBLAS.
#include "device/thread-pool.h"

namespace ts {

constexpr int kMR = 6;
constexpr int kNR = 16;

// c[mr<=6, nr<=16] = beta * c + sum_k ap[k*6 + i] * bp[k*16 + j]; beta == 0 never reads c.
using MicroKernel = void (*)(int kc, const float* ap, const float* bp, float* c, int ldc, float beta, int mr, int nr);

void micro_kernel_generic(int kc, const float* ap, const float* bp, float* c, int ldc, float beta, int mr, int nr);
void micro_kernel_avx2(int kc, const float* ap, const float* bp, float* c, int ldc, float beta, int mr, int nr);
bool cpu_has_avx2_fma();
const char* sgemm_kernel_name();

void sgemm(ThreadPool& pool, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

// Triple loop in double precision: the reference the tests compare against.
void sgemm_reference(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                     int ldb, float beta, float* c, int ldc);

// OpenBLAS, when the build found it (blas-gemm.cc); blas_available() is false otherwise.
bool blas_available();
void blas_set_threads(int threads);
void blas_sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                float beta, float* c, int ldc);

}  // namespace ts
