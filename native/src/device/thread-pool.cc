#include "device/thread-pool.h"

#include <algorithm>
#include <chrono>

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

void ThreadPool::set_test_delays(int join_us, int claim_us) {
  test_join_us_.store(join_us, std::memory_order_relaxed);
  test_claim_us_.store(claim_us, std::memory_order_relaxed);
}

void ThreadPool::drain(const std::function<void(int64_t, int)>& fn, int64_t tasks, int id) {
  // Read once per job, not per task: the claim loop is the pool's hot path.
  const int claim_us = id != 0 ? test_claim_us_.load(std::memory_order_relaxed) : 0;
  for (;;) {
    const int64_t t = next_.fetch_add(1, std::memory_order_relaxed);
    if (claim_us) std::this_thread::sleep_for(std::chrono::microseconds(claim_us));
    if (t >= tasks) break;
    fn(t, id);
  }
}

void ThreadPool::worker_loop(int id) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int)>* job = nullptr;
    int64_t tasks = 0;
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
      if (test_join_us_.load(std::memory_order_relaxed)) {
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(test_join_us_.load(std::memory_order_relaxed)));
        lock.lock();
      }
      seen = generation_.load();
      if (stop_) return;
      // Join the job only if it is still open, and take its description here, under the lock,
      // together with the active_ count that makes run() wait for us. A worker that wakes after
      // run() has already finished the job alone (it needs no help for a few tasks, and a worker
      // can be descheduled for a while on 2 cores) used to join anyway and read job_, tasks_ and
      // next_ unlocked in drain(): it claimed a stale task number from the finished job, run()
      // then published the next job and reset next_ to 0, and the stale number, now below the new
      // tasks_, ran under the new job while run() handed out the same number again. In sgemm that
      // ran one tile's micro-kernel twice, adding a K block's product into C twice whenever
      // beta_eff was 1 (the CI failure: m130 n17 k513 beta1, error 0.234, the k = 1 last block).
      // Joining only a published job under the lock means every number we claim belongs to the
      // job we counted ourselves into, and run() cannot reset next_ for the next job until we
      // have left drain().
      if (job_ == nullptr) continue;
      job = job_;
      tasks = tasks_;
      active_.fetch_add(1);
    }
    drain(*job, tasks, id);
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
  drain(fn, tasks, 0);
  std::unique_lock<std::mutex> lock(mu_);
  // Every task is claimed; wait until every worker that joined this job has left drain(). One that
  // wakes later finds job_ null below and does not touch next_ (see worker_loop).
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

