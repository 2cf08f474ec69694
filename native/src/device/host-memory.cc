#include "device/host-memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace ts {

namespace {
constexpr size_t kHuge = 2u << 20;
}

void* host_alloc(size_t bytes) {
  const bool huge = bytes >= kHuge;
  const size_t align = huge ? kHuge : 64;
  const size_t size = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

void host_free(void* p) { std::free(p); }

}  // namespace ts
