#pragma once
// Row-wise kernels of the transformer. Every parallel split keeps each output element's arithmetic
// order fixed (rows are independent; column sums walk rows in order), so results do not depend on the
// thread count and checkpoint resume is bit-exact.
#include <algorithm>
#include <cstdint>

#include "device/thread-pool.h"

namespace ts {

constexpr float kLnEps = 1e-5f;

void layernorm_forward(ThreadPool& pool, const float* x, const float* g, const float* b, float* y, float* mean,
                       float* rstd, int64_t rows, int d);
// dx += LN'(dy); dg += sum(dy * xhat); db += sum(dy).
void layernorm_backward(ThreadPool& pool, const float* dy, const float* x, const float* mean, const float* rstd,
                        const float* g, float* dx, float* dg, float* db, int64_t rows, int d);
void add_bias(ThreadPool& pool, float* y, const float* b, int64_t rows, int n);
// out[j] += sum_i y[i, j]
void column_sum_add(ThreadPool& pool, const float* y, int64_t rows, int n, float* out);
void gelu_forward(ThreadPool& pool, const float* x, float* y, int64_t count);
// dx = dy * gelu'(x)
void gelu_backward(ThreadPool& pool, const float* x, const float* dy, float* dx, int64_t count);
void add_inplace(ThreadPool& pool, float* y, const float* x, int64_t count);

// Rational approximation (odd 13/6 polynomial ratio), accurate to a few fp32 ulps; unlike tanhf it
// inlines and vectorises, and GELU runs over every MLP activation.
inline float fast_tanh(float x) {
  const float c = 7.90531110763549805f;
  // Ternaries, not std::min/max: GCC turns these into vector min/max; the reference-returning
  // std:: forms kept the GELU loops scalar.
  x = x > c ? c : x;
  x = x < -c ? -c : x;
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * x;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return p / q;
}

}  // namespace ts
