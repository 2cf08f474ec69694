#pragma once
// Large blocks (arena state, offloaded copies) are 2 MiB-aligned and marked for transparent huge
// pages: a fresh 100 MB block then costs ~50 page faults instead of ~25,000, which is most of the
// difference between onload/offload and a plain memcpy into warm memory.
#include <cstddef>
#include <cstdint>

namespace ts {

void* host_alloc(size_t bytes);
void host_free(void* p);

// Owning host buffer of floats (offload target).
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(size_t floats) : n_(floats), p_(floats ? static_cast<float*>(host_alloc(floats * 4)) : nullptr) {}
  ~HostBuffer() { host_free(p_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept : n_(o.n_), p_(o.p_) { o.p_ = nullptr, o.n_ = 0; }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      host_free(p_);
      n_ = o.n_, p_ = o.p_;
      o.p_ = nullptr, o.n_ = 0;
    }
    return *this;
  }
  float* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  size_t n_ = 0;
  float* p_ = nullptr;
};

}  // namespace ts
