#include "device/thread-pool.h"

#include <algorithm>

namespace ts {

ThreadPool::ThreadPool(int threads) {
  const int extra = std::max(0, threads - 1);
  for (int i = 0; i < extra; ++i) workers_.emplace_back([this, i] { worker_loop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::drain(int id) {
  for (;;) {
    const int64_t t = next_.fetch_add(1, std::memory_order_relaxed);
    if (t >= tasks_) break;
    (*job_)(t, id);
  }
}

void ThreadPool::worker_loop(int id) {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly before sleeping: kernels arrive back to back and a condvar wake costs more than
    // most of them.
    for (int spin = 0; spin < 4000 && generation_.load(std::memory_order_acquire) == seen; ++spin) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      if (stop_) return;
      active_.fetch_add(1);
    }
    drain(id);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (active_.fetch_sub(1) == 1) done_.notify_all();
    }
  }
}

void ThreadPool::run(int64_t tasks, const std::function<void(int64_t, int)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    tasks_ = tasks;
    next_.store(0);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  drain(0);
  std::unique_lock<std::mutex> lock(mu_);
  // A worker that has not woken yet would find no work left, but it must not read job_ after we
  // return, so wait until every started worker has left drain() and no task is unclaimed.
  done_.wait(lock, [&] { return active_.load() == 0; });
  job_ = nullptr;
  tasks_ = 0;
}

void parallel_range(ThreadPool& pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, static_cast<int64_t>(pool.size()) * 4);
  chunks = std::max<int64_t>(1, chunks);
  const int64_t step = (n + chunks - 1) / chunks;
  pool.run(chunks, [&](int64_t c, int) {
    const int64_t b = c * step;
    const int64_t e = std::min(n, b + step);
    if (b < e) fn(b, e);
  });
}

}  // namespace ts

