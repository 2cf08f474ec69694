#pragma once
#include <atomic>
#include <memory>
#include <unordered_map>
#include <vector>

#include "device/device.h"

namespace ts {

// CPU "device": host memory under a byte budget (the virtual device the scheduler sees) and a
// persistent thread pool sized to the device's thread count.
class CpuDevice final : public Device {
 public:
  CpuDevice(int threads, uint64_t budget_bytes, bool use_blas = false);
  std::string kind() const override { return "cpu"; }
  int threads() const override { return pool_->size(); }
  void* alloc(size_t bytes) override;
  void free(void* p, size_t bytes) override;
  uint64_t budget_bytes() const override { return budget_; }
  uint64_t used_bytes() const override { return used_; }
  uint64_t peak_bytes() const override { return peak_; }
  void reset_peak() override { peak_ = used_; }
  void trim() override;
  ~CpuDevice() override;
  void copy_to_device(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_on_device(void* dst, const void* src, size_t bytes) override;
  void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override;
  ThreadPool& pool() override { return *pool_; }

 private:
  std::unique_ptr<ThreadPool> pool_;
  uint64_t budget_;
  bool use_blas_;
  // Freed blocks kept by exact size: every training step allocates the same activation buffers, and
  // fresh pages from the OS cost a page fault each (measured at ~8% of a step).
  std::unordered_map<size_t, std::vector<void*>> cache_;
  uint64_t cached_bytes_ = 0;
  uint64_t used_ = 0;
  uint64_t peak_ = 0;
};

// Copies with the pool in parallel chunks: offload/onload and weight publication are bandwidth
// bound and one core does not saturate memory.
void parallel_copy(ThreadPool& pool, void* dst, const void* src, size_t bytes);

}  // namespace ts
