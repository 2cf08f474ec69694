#include "device/cpu-device.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/error.h"
#include "device/host-memory.h"
#include "tensor/sgemm.h"

namespace ts {

CpuDevice::CpuDevice(int threads, uint64_t budget_bytes, bool use_blas)
    : pool_(std::make_unique<ThreadPool>(threads)), budget_(budget_bytes), use_blas_(use_blas) {
  if (use_blas && !blas_available())
    fail("INVALID_ARGUMENT", "gemm 'blas' requested but this build has no OpenBLAS (apt-get install -y libopenblas-dev)");
  if (use_blas) blas_set_threads(threads);
}

static size_t rounded(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }

void* CpuDevice::alloc(size_t bytes) {
  const size_t r = rounded(bytes);
  if (used_ + r > budget_) {
    throw EngineError("BUDGET_EXCEEDED",
                      "device memory budget exceeded: needed " + std::to_string(used_ + r) + " bytes, available " +
                          std::to_string(budget_) + " bytes (in use " + std::to_string(used_) + ")",
                      used_ + r, budget_);
  }
  auto it = cache_.find(r);
  if (it != cache_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= r;
    used_ += r;
    if (used_ > peak_) peak_ = used_;
    return p;
  }
  void* p = nullptr;
  try {
    p = host_alloc(r);
  } catch (const std::bad_alloc&) {
    throw EngineError("BUDGET_EXCEEDED", "host allocation of " + std::to_string(r) + " bytes failed", r, 0);
  }
  used_ += r;
  if (used_ > peak_) peak_ = used_;
  return p;
}

void CpuDevice::free(void* p, size_t bytes) {
  if (!p) return;
  const size_t r = rounded(bytes);
  used_ -= r;
  if (cached_bytes_ + r <= budget_ / 2) {
    cache_[r].push_back(p);
    cached_bytes_ += r;
  } else {
    host_free(p);
  }
}

void CpuDevice::trim() {
  for (auto& [size, blocks] : cache_)
    for (void* p : blocks) host_free(p);
  cache_.clear();
  cached_bytes_ = 0;
}

CpuDevice::~CpuDevice() { trim(); }

void parallel_copy(ThreadPool& pool, void* dst, const void* src, size_t bytes) {
  const size_t chunk = 1 << 20;
  if (bytes < 2 * chunk || pool.size() == 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const int64_t parts = pool.size();
  const size_t per = ((bytes / parts) + 63) & ~static_cast<size_t>(63);
  pool.run(parts, [&](int64_t i, int) {
    const size_t b = per * i;
    if (b >= bytes) return;
    const size_t n = std::min(per, bytes - b);
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, n);
  });
}

void CpuDevice::copy_to_device(void* dst, const void* src, size_t bytes) { parallel_copy(*pool_, dst, src, bytes); }
void CpuDevice::copy_to_host(void* dst, const void* src, size_t bytes) { parallel_copy(*pool_, dst, src, bytes); }
void CpuDevice::copy_on_device(void* dst, const void* src, size_t bytes) { parallel_copy(*pool_, dst, src, bytes); }

void CpuDevice::gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                     int ldb, float beta, float* c, int ldc) {
  add_flops(2ull * m * n * k);
  if (use_blas_) return blas_sgemm(ta == Trans::Yes, tb == Trans::Yes, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  sgemm(*pool_, ta == Trans::Yes, tb == Trans::Yes, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace ts
