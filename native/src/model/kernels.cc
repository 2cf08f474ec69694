#include "model/kernels.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace ts {

namespace {

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;

__attribute__((target_clones("avx2", "default"))) void ln_rows(const float* x, const float* g, const float* b,
                                                                    float* y, float* mean, float* rstd, int64_t r0,
                                                                    int64_t r1, int d) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * d;
    float s[8] = {}, q[8] = {};
    int j = 0;
    for (; j + 8 <= d; j += 8)
      for (int u = 0; u < 8; ++u) s[u] += xr[j + u];
    float sum = 0;
    for (int u = 0; u < 8; ++u) sum += s[u];
    for (; j < d; ++j) sum += xr[j];
    const float mu = sum / d;
    j = 0;
    for (; j + 8 <= d; j += 8)
      for (int u = 0; u < 8; ++u) q[u] += (xr[j + u] - mu) * (xr[j + u] - mu);
    float var = 0;
    for (int u = 0; u < 8; ++u) var += q[u];
    for (; j < d; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    const float rs = 1.0f / std::sqrt(var / d + kLnEps);
    if (mean) mean[r] = mu, rstd[r] = rs;
    float* yr = y + r * d;
    for (j = 0; j < d; ++j) yr[j] = (xr[j] - mu) * rs * g[j] + b[j];
  }
}

__attribute__((target_clones("avx2", "default"))) void ln_back_rows(const float* dy, const float* x,
                                                                         const float* mean, const float* rstd,
                                                                         const float* g, float* dx, int64_t r0,
                                                                         int64_t r1, int d) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* dyr = dy + r * d;
    const float* xr = x + r * d;
    const float mu = mean[r], rs = rstd[r];
    float a[8] = {}, c[8] = {};
    int j = 0;
    for (; j + 8 <= d; j += 8)
      for (int u = 0; u < 8; ++u) {
        const float dxh = dyr[j + u] * g[j + u];
        a[u] += dxh;
        c[u] += dxh * (xr[j + u] - mu) * rs;
      }
    float sa = 0, sc = 0;
    for (int u = 0; u < 8; ++u) sa += a[u], sc += c[u];
    for (; j < d; ++j) {
      const float dxh = dyr[j] * g[j];
      sa += dxh;
      sc += dxh * (xr[j] - mu) * rs;
    }
    sa /= d;
    sc /= d;
    float* dxr = dx + r * d;
    for (j = 0; j < d; ++j) {
      const float xh = (xr[j] - mu) * rs;
      dxr[j] += rs * (dyr[j] * g[j] - sa - xh * sc);
    }
  }
}

__attribute__((target_clones("avx2", "default"))) void gelu_span(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + fast_tanh(kGeluC * (v + kGeluA * v * v * v)));
  }
}

__attribute__((target_clones("avx2", "default"))) void gelu_back_span(const float* x, const float* dy, float* dx,
                                                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float t = fast_tanh(kGeluC * (v + kGeluA * v * v * v));
    const float dt = (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluA * v * v);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt);
  }
}

}  // namespace

void layernorm_forward(ThreadPool& pool, const float* x, const float* g, const float* b, float* y, float* mean,
                       float* rstd, int64_t rows, int d) {
  parallel_range(pool, rows, 64, [&](int64_t r0, int64_t r1) { ln_rows(x, g, b, y, mean, rstd, r0, r1, d); });
}

void layernorm_backward(ThreadPool& pool, const float* dy, const float* x, const float* mean, const float* rstd,
                        const float* g, float* dx, float* dg, float* db, int64_t rows, int d) {
  parallel_range(pool, rows, 64, [&](int64_t r0, int64_t r1) { ln_back_rows(dy, x, mean, rstd, g, dx, r0, r1, d); });
  parallel_range(pool, d, 16, [&](int64_t c0, int64_t c1) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* dyr = dy + r * d;
      const float* xr = x + r * d;
      for (int64_t j = c0; j < c1; ++j) {
        dg[j] += dyr[j] * (xr[j] - mean[r]) * rstd[r];
        db[j] += dyr[j];
      }
    }
  });
}

void add_bias(ThreadPool& pool, float* y, const float* b, int64_t rows, int n) {
  parallel_range(pool, rows, 128, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int j = 0; j < n; ++j) y[r * n + j] += b[j];
  });
}

void column_sum_add(ThreadPool& pool, const float* y, int64_t rows, int n, float* out) {
  parallel_range(pool, n, 16, [&](int64_t c0, int64_t c1) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = c0; j < c1; ++j) out[j] += y[r * n + j];
  });
}

// Chunks start at multiples of 64 elements so that the same element always lands in the same lane
// of the vector loop, whatever the batch shape or thread count.
static void aligned_chunks(ThreadPool& pool, int64_t count, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t blocks = (count + 63) / 64;
  parallel_range(pool, blocks, 128, [&](int64_t b0, int64_t b1) { fn(b0 * 64, std::min(count, b1 * 64)); });
}

void gelu_forward(ThreadPool& pool, const float* x, float* y, int64_t count) {
  aligned_chunks(pool, count, [&](int64_t b, int64_t e) { gelu_span(x + b, y + b, e - b); });
}

void gelu_backward(ThreadPool& pool, const float* x, const float* dy, float* dx, int64_t count) {
  aligned_chunks(pool, count, [&](int64_t b, int64_t e) { gelu_back_span(x + b, dy + b, dx + b, e - b); });
}

void add_inplace(ThreadPool& pool, float* y, const float* x, int64_t count) {
  parallel_range(pool, count, 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] += x[i];
  });
}

}  // namespace ts
