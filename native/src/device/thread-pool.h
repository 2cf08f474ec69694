#pragma once
// A persistent pool: the caller thread takes part as worker 0, so `threads` = 1 means no extra
// threads at all. Tasks are handed out dynamically, so every kernel must make each task's output
// independent of which thread ran it; that is what keeps results identical across thread counts.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ts {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(task, thread) for task in [0, tasks); returns when all are done.
  void run(int64_t tasks, const std::function<void(int64_t, int)>& fn);

  // Test only (poolCheck in bench-exports.cc): every worker sleeps join_us after it wakes for a job
  // and before it joins it, and claim_us after each task number it claims. This widens the windows
  // of the pool's handoff so that a test can hit them on purpose; 0 and 0 (the default) is production.
  void set_test_delays(int join_us, int claim_us);

 private:
  void worker_loop(int id);
  void drain(const std::function<void(int64_t, int)>& fn, int64_t tasks, int id);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The published job; read and written under mu_ only. null between run() calls.
  const std::function<void(int64_t, int)>* job_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> active_{0};
  std::atomic<uint64_t> generation_{0};
  bool stop_ = false;
  std::atomic<int> test_join_us_{0};
  std::atomic<int> test_claim_us_{0};
};

// Splits [0, n) into chunks of at least `grain` and runs fn(begin, end) on the pool.
void parallel_range(ThreadPool& pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ts
