#pragma once
// Versioned weight publication through a POSIX shared-memory segment, no serialisation: a header
// page then two slots of raw fp32 parameters (double buffer). The publisher writes the slot that is
// not the latest, then flips `latest`; readers copy a slot under a per-slot sequence counter
// (seqlock) and retry if the publisher reused that slot mid-copy. Engines in other processes map the
// same name. The creator unlinks the name when it goes away; mappings already open stay valid.
#include <cstdint>
#include <memory>
#include <string>

#include "device/thread-pool.h"

namespace ts {

class WeightShm {
 public:
  static std::unique_ptr<WeightShm> create(const std::string& name, int64_t floats, uint64_t layout_hash);
  static std::unique_ptr<WeightShm> attach(const std::string& name, int64_t floats, uint64_t layout_hash);
  ~WeightShm();

  const std::string& name() const { return name_; }
  uint64_t bytes() const { return map_bytes_; }
  void publish(ThreadPool& pool, const float* params, int64_t version);
  // Latest published version, or -1 when nothing was published yet.
  int64_t latest_version() const;
  // Copies the latest weights into dst when their version is newer than `have`; returns the version
  // copied, or -1 when there was nothing newer.
  int64_t read_if_newer(ThreadPool& pool, float* dst, int64_t have);

 private:
  WeightShm() = default;
  struct Header;
  Header* header() const;
  float* slot(int i) const;

  std::string name_;
  int fd_ = -1;
  void* map_ = nullptr;
  uint64_t map_bytes_ = 0;
  int64_t floats_ = 0;
  bool owner_ = false;
};

}  // namespace ts
