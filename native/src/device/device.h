#pragma once
// The seam a CUDA backend slots into. Everything the engine keeps between calls (weights, optimizer
// moments, KV cache, activations) is allocated through alloc() and counted against the budget, so
// the scheduler's memory figure is the engine's real footprint. Compute that is not a gemm goes
// through pool() on CPU; a GPU device would provide the same kernels behind its own streams.
#include <cstddef>
#include <cstdint>
#include <string>

#include "device/thread-pool.h"

namespace ts {

enum class Trans { No, Yes };

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string kind() const = 0;
  virtual int threads() const = 0;

  // Arena: throws EngineError BUDGET_EXCEEDED (with needed/available bytes) instead of failing later.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p, size_t bytes) = 0;
  virtual uint64_t budget_bytes() const = 0;
  virtual uint64_t used_bytes() const = 0;
  virtual uint64_t peak_bytes() const = 0;
  virtual void reset_peak() = 0;
  // Returns blocks the allocator kept for reuse to the system (offload calls it).
  virtual void trim() = 0;

  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_on_device(void* dst, const void* src, size_t bytes) = 0;

  // Row-major C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C.
  virtual void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc) = 0;

  virtual ThreadPool& pool() = 0;

  // FLOPs executed since the last reset: feeds the per-call profile.
  uint64_t flops() const { return flops_; }
  void add_flops(uint64_t f) { flops_ += f; }
  void reset_flops() { flops_ = 0; }

 private:
  uint64_t flops_ = 0;
};

// A typed arena allocation that returns its bytes when it goes away.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device* dev, size_t floats) : dev_(dev), n_(floats) {
    if (floats) p_ = static_cast<float*>(dev->alloc(floats * sizeof(float)));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : dev_(o.dev_), p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      dev_ = o.dev_, p_ = o.p_, n_ = o.n_;
      o.p_ = nullptr, o.n_ = 0;
    }
    return *this;
  }
  void reset() {
    if (p_) dev_->free(p_, n_ * sizeof(float));
    p_ = nullptr;
    n_ = 0;
  }
  float* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return p_ == nullptr; }

 private:
  Device* dev_ = nullptr;
  float* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace ts
