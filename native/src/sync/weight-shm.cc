#include "sync/weight-shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "device/cpu-device.h"

namespace ts {

namespace {
constexpr uint64_t kMagic = 0x5453574549474854ull;  // "TSWEIGHT"
constexpr uint64_t kHeaderBytes = 4096;

void check_name(const std::string& name) {
  if (name.size() < 2 || name.size() > 200 || name[0] != '/' || name.find('/', 1) != std::string::npos)
    fail("INVALID_ARGUMENT", "shared-memory name must look like '/timeshare-...' (got '" + name + "')");
}
}  // namespace

struct WeightShm::Header {
  uint64_t magic;
  uint64_t floats;
  uint64_t layout_hash;
  std::atomic<uint64_t> latest;  // ((version + 1) << 1) | slot; 0 = nothing published
  std::atomic<uint64_t> seq[2];  // odd while the slot is being written
};
static_assert(sizeof(std::atomic<uint64_t>) == 8, "lock-free 64-bit atomics are required across processes");

WeightShm::Header* WeightShm::header() const { return static_cast<Header*>(map_); }
float* WeightShm::slot(int i) const {
  return reinterpret_cast<float*>(static_cast<char*>(map_) + kHeaderBytes + static_cast<uint64_t>(i) * floats_ * 4);
}

std::unique_ptr<WeightShm> WeightShm::create(const std::string& name, int64_t floats, uint64_t layout_hash) {
  check_name(name);
  std::unique_ptr<WeightShm> w(new WeightShm());
  w->name_ = name;
  w->floats_ = floats;
  w->map_bytes_ = kHeaderBytes + 2ull * floats * 4;
  w->fd_ = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (w->fd_ < 0) fail("WEIGHT_SYNC_FAILED", "shm_open(" + name + "): " + std::strerror(errno));
  w->owner_ = true;
  if (ftruncate(w->fd_, static_cast<off_t>(w->map_bytes_)) != 0)
    fail("WEIGHT_SYNC_FAILED", "ftruncate(" + name + "): " + std::strerror(errno));
  w->map_ = mmap(nullptr, w->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd_, 0);
  if (w->map_ == MAP_FAILED) {
    w->map_ = nullptr;
    fail("WEIGHT_SYNC_FAILED", "mmap(" + name + "): " + std::strerror(errno));
  }
  Header* h = new (w->map_) Header();
  h->floats = floats;
  h->layout_hash = layout_hash;
  h->latest.store(0);
  h->seq[0].store(0);
  h->seq[1].store(0);
  std::atomic_thread_fence(std::memory_order_release);
  h->magic = kMagic;
  return w;
}

std::unique_ptr<WeightShm> WeightShm::attach(const std::string& name, int64_t floats, uint64_t layout_hash) {
  check_name(name);
  std::unique_ptr<WeightShm> w(new WeightShm());
  w->name_ = name;
  w->floats_ = floats;
  w->fd_ = shm_open(name.c_str(), O_RDWR, 0600);
  if (w->fd_ < 0) fail("WEIGHT_SYNC_FAILED", "no published weights under " + name + ": " + std::strerror(errno));
  struct stat st {};
  fstat(w->fd_, &st);
  w->map_bytes_ = kHeaderBytes + 2ull * floats * 4;
  if (static_cast<uint64_t>(st.st_size) != w->map_bytes_)
    fail("WEIGHT_SYNC_MISMATCH", name + " holds " + std::to_string(st.st_size) + " bytes; this model needs " +
                                     std::to_string(w->map_bytes_));
  w->map_ = mmap(nullptr, w->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd_, 0);
  if (w->map_ == MAP_FAILED) {
    w->map_ = nullptr;
    fail("WEIGHT_SYNC_FAILED", "mmap(" + name + "): " + std::strerror(errno));
  }
  Header* h = w->header();
  if (h->magic != kMagic || h->floats != static_cast<uint64_t>(floats) || h->layout_hash != layout_hash)
    fail("WEIGHT_SYNC_MISMATCH", name + " was published by a model with a different configuration");
  return w;
}

WeightShm::~WeightShm() {
  if (map_) munmap(map_, map_bytes_);
  if (fd_ >= 0) close(fd_);
  if (owner_) shm_unlink(name_.c_str());
}

void WeightShm::publish(ThreadPool& pool, const float* params, int64_t version) {
  Header* h = header();
  const uint64_t latest = h->latest.load(std::memory_order_acquire);
  const int s = latest == 0 ? 0 : static_cast<int>(1 - (latest & 1));
  h->seq[s].fetch_add(1, std::memory_order_acq_rel);
  std::atomic_thread_fence(std::memory_order_release);
  parallel_copy(pool, slot(s), params, static_cast<size_t>(floats_) * 4);
  std::atomic_thread_fence(std::memory_order_release);
  h->seq[s].fetch_add(1, std::memory_order_release);
  h->latest.store((static_cast<uint64_t>(version + 1) << 1) | static_cast<uint64_t>(s), std::memory_order_release);
}

int64_t WeightShm::latest_version() const {
  const uint64_t l = header()->latest.load(std::memory_order_acquire);
  return l == 0 ? -1 : static_cast<int64_t>(l >> 1) - 1;
}

int64_t WeightShm::read_if_newer(ThreadPool& pool, float* dst, int64_t have) {
  Header* h = header();
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const uint64_t l = h->latest.load(std::memory_order_acquire);
    if (l == 0) return -1;
    const int64_t version = static_cast<int64_t>(l >> 1) - 1;
    if (version <= have) return -1;
    const int s = static_cast<int>(l & 1);
    const uint64_t s1 = h->seq[s].load(std::memory_order_acquire);
    if (s1 & 1) continue;
    parallel_copy(pool, dst, slot(s), static_cast<size_t>(floats_) * 4);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (h->seq[s].load(std::memory_order_relaxed) == s1) return version;
  }
  fail("WEIGHT_SYNC_FAILED", "could not read a consistent weight version from " + name_);
}

}  // namespace ts
