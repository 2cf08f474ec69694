#include "model/attention.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace ts {

namespace {

inline float dot(const float* a, const float* b, int n) {
  float acc[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int u = 0; u < 8; ++u) acc[u] += a[i + u] * b[i + u];
  float s = 0;
  for (int u = 0; u < 8; ++u) s += acc[u];
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

__attribute__((target_clones("avx2", "default"))) void attend_one(const AttnShape& s, int b, int h,
                                                                       const float* q, int64_t q_stride,
                                                                       const float* k, const float* v,
                                                                       int64_t kv_stride, int64_t kv_bs, int p,
                                                                       float* out, float* probs, float* sc) {
  const int hd = s.head_dim, d = s.heads * hd, L = s.queries;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const float* kb = k + b * kv_bs + h * hd;
  const float* vb = v + b * kv_bs + h * hd;
  for (int i = 0; i < L; ++i) {
    const int t = s.t0 + i;
    float* o = out + (static_cast<int64_t>(b) * L + i) * d + h * hd;
    float* pr = probs ? probs + ((static_cast<int64_t>(b) * s.heads + h) * L + i) * L : nullptr;
    if (pr) std::memset(pr, 0, sizeof(float) * L);
    std::memset(o, 0, sizeof(float) * hd);
    if (t < p) continue;
    const float* qi = q + (static_cast<int64_t>(b) * L + i) * q_stride + h * hd;
    float mx = -INFINITY;
    for (int j = p; j <= t; ++j) {
      sc[j] = dot(qi, kb + j * kv_stride, hd) * scale;
      mx = sc[j] > mx ? sc[j] : mx;
    }
    float sum = 0;
    for (int j = p; j <= t; ++j) {
      sc[j] = std::exp(sc[j] - mx);
      sum += sc[j];
    }
    const float inv = 1.0f / sum;
    for (int j = p; j <= t; ++j) {
      const float w = sc[j] * inv;
      if (pr) pr[j] = w;
      const float* vj = vb + j * kv_stride;
      for (int e = 0; e < hd; ++e) o[e] += w * vj[e];
    }
  }
}

__attribute__((target_clones("avx2", "default"))) void attend_back_one(const AttnShape& s, int b, int h,
                                                                            const float* qkv, const float* probs,
                                                                            const float* dout, int p, float* dqkv,
                                                                            float* dp) {
  const int hd = s.head_dim, d = s.heads * hd, L = s.queries;
  const int64_t rs = 3 * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const float* base = qkv + static_cast<int64_t>(b) * L * rs;
  float* dbase = dqkv + static_cast<int64_t>(b) * L * rs;
  for (int j = 0; j < L; ++j)
    for (int part = 0; part < 3; ++part) std::memset(dbase + j * rs + part * d + h * hd, 0, sizeof(float) * hd);
  for (int i = p; i < L; ++i) {
    const float* pr = probs + ((static_cast<int64_t>(b) * s.heads + h) * L + i) * L;
    const float* doi = dout + (static_cast<int64_t>(b) * L + i) * d + h * hd;
    const float* qi = base + i * rs + h * hd;
    float* dqi = dbase + i * rs + h * hd;
    float dot_pd = 0;
    for (int j = p; j <= i; ++j) {
      const float* vj = base + j * rs + 2 * d + h * hd;
      dp[j] = dot(doi, vj, hd);
      dot_pd += pr[j] * dp[j];
      float* dvj = dbase + j * rs + 2 * d + h * hd;
      for (int e = 0; e < hd; ++e) dvj[e] += pr[j] * doi[e];
    }
    for (int j = p; j <= i; ++j) {
      const float ds = pr[j] * (dp[j] - dot_pd) * scale;
      const float* kj = base + j * rs + d + h * hd;
      float* dkj = dbase + j * rs + d + h * hd;
      for (int e = 0; e < hd; ++e) {
        dqi[e] += ds * kj[e];
        dkj[e] += ds * qi[e];
      }
    }
  }
}

}  // namespace

void attention_forward(ThreadPool& pool, const AttnShape& s, const float* q, int64_t q_stride, const float* k,
                       const float* v, int64_t kv_stride, int64_t kv_batch_stride, const int32_t* pad, float* out,
                       float* probs) {
  const int64_t tasks = static_cast<int64_t>(s.batch) * s.heads;
  const int tmax = s.t0 + s.queries;
  parallel_range(pool, tasks, 8, [&](int64_t a, int64_t e) {
    std::vector<float> sc(tmax);
    for (int64_t t = a; t < e; ++t) {
      const int b = static_cast<int>(t / s.heads), h = static_cast<int>(t % s.heads);
      attend_one(s, b, h, q, q_stride, k, v, kv_stride, kv_batch_stride, pad[b], out, probs, sc.data());
    }
  });
}

void attention_backward(ThreadPool& pool, const AttnShape& s, const float* qkv, const float* probs,
                        const float* dout, const int32_t* pad, float* dqkv) {
  const int64_t tasks = static_cast<int64_t>(s.batch) * s.heads;
  parallel_range(pool, tasks, 8, [&](int64_t a, int64_t e) {
    std::vector<float> dp(s.queries);
    for (int64_t t = a; t < e; ++t) {
      const int b = static_cast<int>(t / s.heads), h = static_cast<int>(t % s.heads);
      attend_back_one(s, b, h, qkv, probs, dout, pad[b], dqkv, dp.data());
    }
  });
}

}  // namespace ts
