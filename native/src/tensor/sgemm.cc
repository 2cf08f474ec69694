#include "tensor/sgemm.h"

#include <algorithm>
#include <vector>

namespace ts {

namespace {

constexpr int kKC = 256;
constexpr int kMCMax = 144;
constexpr int kNB = 256;  // columns per task: 16 strips of B stay hot in L2 while A streams

inline float a_at(const float* a, int lda, bool ta, long i, long k) { return ta ? a[k * lda + i] : a[i * lda + k]; }
inline float b_at(const float* b, int ldb, bool tb, long k, long j) { return tb ? b[j * ldb + k] : b[k * ldb + j]; }

void pack_a_scaled(const float* a, int lda, bool ta, int i0, int mc, int p0, int kc, float alpha, float* out) {
  for (int is = 0; is < mc; is += kMR) {
    const int rows = std::min(kMR, mc - is);
    for (int p = 0; p < kc; ++p) {
      float* dst = out + static_cast<long>(is) * kc + p * kMR;
      for (int r = 0; r < kMR; ++r) dst[r] = r < rows ? alpha * a_at(a, lda, ta, i0 + is + r, p0 + p) : 0.0f;
    }
  }
}

void pack_a(const float* a, int lda, bool ta, int i0, int mc, int p0, int kc, float alpha, float* out) {
  if (alpha == 1.0f) {
    // Fast paths for full strips: plain copies the compiler can vectorise.
    const int full = mc / kMR * kMR;
    if (ta && full > 0) {
      // A^T: row p of the source holds all mc values contiguously; walk it once per p instead of
      // revisiting each cache line once per 6-row strip.
      for (int p = 0; p < kc; ++p) {
        const float* src = a + static_cast<long>(p0 + p) * lda + i0;
        for (int is = 0; is < full; is += kMR) {
          float* dst = out + static_cast<long>(is) * kc + p * kMR;
          for (int r = 0; r < kMR; ++r) dst[r] = src[is + r];
        }
      }
    }
    int is = ta ? full : 0;
    for (; is + kMR <= mc; is += kMR) {
      float* dst = out + static_cast<long>(is) * kc;
      for (int r = 0; r < kMR; ++r) {
        const float* src = a + static_cast<long>(i0 + is + r) * lda + p0;
        for (int p = 0; p < kc; ++p) dst[p * kMR + r] = src[p];
      }
    }
    if (is < mc) pack_a_scaled(a, lda, ta, i0 + is, mc - is, p0, kc, 1.0f, out + static_cast<long>(is) * kc);
    return;
  }
  pack_a_scaled(a, lda, ta, i0, mc, p0, kc, alpha, out);
}

void pack_b_strip(const float* b, int ldb, bool tb, int p0, int kc, int j0, int cols, float* out) {
  if (!tb && cols == kNR) {
    for (int p = 0; p < kc; ++p) {
      const float* src = b + static_cast<long>(p0 + p) * ldb + j0;
      std::copy(src, src + kNR, out + p * kNR);
    }
    return;
  }
  if (tb) {
    // B^T: column c of the strip is a contiguous row of b, so walk it along K.
    for (int c = 0; c < kNR; ++c) {
      if (c < cols) {
        const float* src = b + static_cast<long>(j0 + c) * ldb + p0;
        for (int p = 0; p < kc; ++p) out[p * kNR + c] = src[p];
      } else {
        for (int p = 0; p < kc; ++p) out[p * kNR + c] = 0.0f;
      }
    }
    return;
  }
  for (int p = 0; p < kc; ++p)
    for (int c = 0; c < kNR; ++c) out[p * kNR + c] = c < cols ? b_at(b, ldb, tb, p0 + p, j0 + c) : 0.0f;
}

MicroKernel pick_kernel() { return cpu_has_avx2_fma() ? micro_kernel_avx2 : micro_kernel_generic; }

struct Scratch {
  std::vector<float, std::allocator<float>> buf;
  float* get(size_t n) {
    // +16 floats so that the pointer can be rounded up to a 64-byte boundary for aligned loads.
    if (buf.size() < n + 16) buf.resize(n + 16);
    auto addr = reinterpret_cast<uintptr_t>(buf.data());
    return reinterpret_cast<float*>((addr + 63) & ~static_cast<uintptr_t>(63));
  }
};

}  // namespace

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

const char* sgemm_kernel_name() { return cpu_has_avx2_fma() ? "avx2-fma 6x16" : "generic 6x16"; }

void micro_kernel_generic(int kc, const float* ap, const float* bp, float* c, int ldc, float beta, int mr, int nr) {
  float acc[kMR][kNR] = {};
  for (int p = 0; p < kc; ++p) {
    for (int i = 0; i < kMR; ++i) {
      const float av = ap[p * kMR + i];
      for (int j = 0; j < kNR; ++j) acc[i][j] += av * bp[p * kNR + j];
    }
  }
  for (int i = 0; i < mr; ++i) {
    float* row = c + static_cast<long>(i) * ldc;
    for (int j = 0; j < nr; ++j) row[j] = beta == 0.0f ? acc[i][j] : beta * row[j] + acc[i][j];
  }
}

void sgemm(ThreadPool& pool, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) c[static_cast<long>(i) * ldc + j] = beta == 0.0f ? 0.0f : beta * c[static_cast<long>(i) * ldc + j];
    return;
  }
  static const MicroKernel kernel = pick_kernel();
  const int threads = pool.size();
  const int nstrips = (n + kNR - 1) / kNR;
  const int nblocks = (n + kNB - 1) / kNB;
  int mblocks = (m + kMCMax - 1) / kMCMax;
  // Enough tasks for every thread when M is short (weight gradients have M = d_model).
  const long flops = 2L * m * n * k;
  const int want = flops < 200000 ? 1 : 2 * threads;
  if (mblocks * nblocks < want) mblocks = std::min((m + kMR - 1) / kMR, (want + nblocks - 1) / nblocks);
  int mc = (m + mblocks - 1) / mblocks;
  mc = (mc + kMR - 1) / kMR * kMR;
  mblocks = (m + mc - 1) / mc;

  static thread_local Scratch bscratch;
  const int kc_max = std::min(k, kKC);
  float* bpack = bscratch.get(static_cast<size_t>(kc_max) * nstrips * kNR);

  for (int p0 = 0; p0 < k; p0 += kKC) {
    const int kc = std::min(kKC, k - p0);
    const float beta_eff = p0 == 0 ? beta : 1.0f;
    const long strip_size = static_cast<long>(kc) * kNR;
    const int pack_tasks = flops < 200000 ? 1 : std::min(nstrips, threads);
    pool.run(pack_tasks, [&](int64_t t, int) {
      for (int s = static_cast<int>(t); s < nstrips; s += pack_tasks)
        pack_b_strip(b, ldb, tb, p0, kc, s * kNR, std::min(kNR, n - s * kNR), bpack + s * strip_size);
    });
    const int tasks = mblocks * nblocks;
    pool.run(flops < 200000 ? 1 : tasks, [&](int64_t t0, int) {
      static thread_local Scratch ascratch;
      const int64_t first = flops < 200000 ? 0 : t0;
      const int64_t last = flops < 200000 ? tasks : t0 + 1;
      for (int64_t t = first; t < last; ++t) {
        const int mb = static_cast<int>(t / nblocks);
        const int nb = static_cast<int>(t % nblocks);
        const int i0 = mb * mc;
        const int rows = std::min(mc, m - i0);
        if (rows <= 0) continue;
        float* apack = ascratch.get(static_cast<size_t>(mc) * kc);
        pack_a(a, lda, ta, i0, rows, p0, kc, alpha, apack);
        const int s_begin = nb * (kNB / kNR);
        const int s_end = std::min(nstrips, s_begin + kNB / kNR);
        for (int s = s_begin; s < s_end; ++s) {
          const int j0 = s * kNR;
          const int cols = std::min(kNR, n - j0);
          const float* bp = bpack + s * strip_size;
          for (int is = 0; is < rows; is += kMR) {
            kernel(kc, apack + static_cast<long>(is) * kc, bp, c + static_cast<long>(i0 + is) * ldc + j0, ldc, beta_eff,
                   std::min(kMR, rows - is), cols);
          }
        }
      }
    });
  }
}

void sgemm_reference(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                     int ldb, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += static_cast<double>(a_at(a, lda, ta, i, p)) * b_at(b, ldb, tb, p, j);
      float& out = c[static_cast<long>(i) * ldc + j];
      out = static_cast<float>(alpha * s + (beta == 0.0f ? 0.0 : static_cast<double>(beta) * out));
    }
}

}  // namespace ts
