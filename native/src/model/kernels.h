#pragma once
// Row-wise kernels of the transformer. Every parallel split keeps each output element's arithmetic
// order fixed (rows are independent; column sums walk rows in order), so results do not depend on the
// thread count and checkpoint resume is bit-exact.
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
float fast_tanh(float x);

}  // namespace ts
