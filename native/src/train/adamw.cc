#include "train/adamw.h"

#include <cmath>
#include <vector>

#include "common/error.h"

namespace ts {

double grad_norm(ThreadPool& pool, const float* g, int64_t n) {
  const int64_t block = 16384;
  const int64_t blocks = (n + block - 1) / block;
  std::vector<double> part(blocks, 0.0);
  pool.run(blocks, [&](int64_t b, int) {
    double s = 0;
    const int64_t e = std::min(n, (b + 1) * block);
    for (int64_t i = b * block; i < e; ++i) s += static_cast<double>(g[i]) * g[i];
    part[b] = s;
  });
  double total = 0;
  for (double p : part) total += p;
  return std::sqrt(total);
}

double adamw_step(ThreadPool& pool, const ParamLayout& l, float* params, float* grads, float* m, float* v,
                  int64_t step, const AdamWConfig& c) {
  const double norm = grad_norm(pool, grads, l.total);
  if (!std::isfinite(norm)) fail("NON_FINITE", "gradient contains NaN or Inf; the update was skipped");
  const float scale = (c.clip > 0 && norm > c.clip) ? static_cast<float>(c.clip / (norm + 1e-6)) : 1.0f;
  const float bc1 = 1.0f - static_cast<float>(std::pow(c.beta1, static_cast<double>(step)));
  const float bc2 = 1.0f - static_cast<float>(std::pow(c.beta2, static_cast<double>(step)));
  const float step_size = c.lr / bc1;
  const float inv_sqrt_bc2 = 1.0f / std::sqrt(bc2);
  for (const auto& t : l.tensors) {
    const float decay = t.shape.size() >= 2 && t.name.find("ln_") == std::string::npos ? c.lr * c.weight_decay : 0.0f;
    float* p = params + t.offset;
    float* g = grads + t.offset;
    float* mm = m + t.offset;
    float* vv = v + t.offset;
    parallel_range(pool, t.size, 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float gi = g[i] * scale;
        mm[i] = c.beta1 * mm[i] + (1.0f - c.beta1) * gi;
        vv[i] = c.beta2 * vv[i] + (1.0f - c.beta2) * gi * gi;
        const float denom = std::sqrt(vv[i]) * inv_sqrt_bc2 + c.eps;
        p[i] -= decay * p[i] + step_size * mm[i] / denom;
      }
    });
  }
  return norm;
}

}  // namespace ts
