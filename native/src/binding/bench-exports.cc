// Module-level functions for the benchmark and the tests: gemm throughput (ours vs OpenBLAS), copy
// bandwidth (ours vs plain memcpy), gemm correctness against a double-precision reference, the
// thread pool's run-each-task-exactly-once check, and the finite-difference gradient check. All run
// off the event loop.
#include <napi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "binding/async-call.h"
#include "binding/convert.h"
#include "common/clock.h"
#include "common/rng.h"
#include "device/cpu-device.h"
#include "tensor/sgemm.h"
#include "train/grad-check.h"
#include "train/policy-loss.h"

namespace ts {

Napi::Value bench_gemm(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    const int m = integer(o, "m", 512, 1, 65536), n = integer(o, "n", 512, 1, 65536), k = integer(o, "k", 512, 1, 65536);
    const bool ta = boolean(o, "transA", false), tb = boolean(o, "transB", false);
    const int threads = integer(o, "threads", 2, 1, 256);
    const double min_seconds = num(o, "seconds", 0.3, 0.001, 60);
    const std::string which = str(o, "kernel", "own");
    if (which == "blas" && !blas_available())
      fail("BLAS_UNAVAILABLE", "OpenBLAS was not found at build time (apt-get install -y libopenblas-dev, then npm ci)");
    auto gflops = std::make_shared<double>(0);
    return AsyncCall::start(
        info.Env(),
        [=] {
          std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n), c(static_cast<size_t>(m) * n);
          Rng r(7);
          for (auto& x : a) x = r.uniform() - 0.5f;
          for (auto& x : b) x = r.uniform() - 0.5f;
          ThreadPool pool(threads);
          if (which == "blas") blas_set_threads(threads);
          auto run = [&] {
            if (which == "blas")
              blas_sgemm(ta, tb, m, n, k, 1.0f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.0f, c.data(), n);
            else
              sgemm(pool, ta, tb, m, n, k, 1.0f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.0f, c.data(), n);
          };
          run();
          int reps = 0;
          const double t0 = now_seconds();
          double t = t0;
          while (t - t0 < min_seconds) {
            run();
            ++reps;
            t = now_seconds();
          }
          *gflops = 2.0 * m * n * k * reps / (t - t0) / 1e9;
        },
        [gflops](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, *gflops); });
  });
}

Napi::Value bench_copy(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    const double bytes = num(o, "bytes", 64 << 20, 1024, 8e9);
    const int threads = integer(o, "threads", 2, 1, 256);
    const double min_seconds = num(o, "seconds", 0.3, 0.001, 60);
    auto out = std::make_shared<std::pair<double, double>>();
    return AsyncCall::start(
        info.Env(),
        [=] {
          const size_t n = static_cast<size_t>(bytes);
          std::vector<char> src(n, 1), dst(n, 0);
          ThreadPool pool(threads);
          auto measure = [&](auto&& fn) {
            fn();
            int reps = 0;
            const double t0 = now_seconds();
            double t = t0;
            while (t - t0 < min_seconds) {
              fn();
              ++reps;
              t = now_seconds();
            }
            return static_cast<double>(n) * reps / (t - t0) / 1e9;
          };
          out->first = measure([&] { std::memcpy(dst.data(), src.data(), n); });
          out->second = measure([&] { parallel_copy(pool, dst.data(), src.data(), n); });
        },
        [out](Napi::Env env) -> Napi::Value {
          Napi::Object r = Napi::Object::New(env);
          r.Set("memcpyGBps", out->first);
          r.Set("parallelCopyGBps", out->second);
          return r;
        });
  });
}

Napi::Value gemm_check(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    const int m = integer(o, "m", 7, 1, 4096), n = integer(o, "n", 9, 1, 4096), k = integer(o, "k", 5, 1, 4096);
    const bool ta = boolean(o, "transA", false), tb = boolean(o, "transB", false);
    const float beta = static_cast<float>(num(o, "beta", 0, -10, 10));
    const int threads = integer(o, "threads", 2, 1, 64);
    const bool generic = boolean(o, "generic", false);
    auto err = std::make_shared<double>(0);
    return AsyncCall::start(
        info.Env(),
        [=] {
          Rng r(m * 131 + n * 7 + k);
          std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n), c(static_cast<size_t>(m) * n);
          for (auto& x : a) x = r.uniform() - 0.5f;
          for (auto& x : b) x = r.uniform() - 0.5f;
          for (auto& x : c) x = r.uniform() - 0.5f;
          std::vector<float> ref = c;
          ThreadPool pool(threads);
          const int lda = ta ? m : k, ldb = tb ? k : n;
          if (generic) {
            // Exercise the portable micro-kernel directly on one full tile of packed data.
            std::vector<float> ap(k * kMR, 0.0f), bp(k * kNR, 0.0f);
            const int mr = std::min(m, kMR), nr = std::min(n, kNR);
            for (int p = 0; p < k; ++p) {
              for (int i = 0; i < mr; ++i) ap[p * kMR + i] = ta ? a[p * lda + i] : a[i * lda + p];
              for (int j = 0; j < nr; ++j) bp[p * kNR + j] = tb ? b[j * ldb + p] : b[p * ldb + j];
            }
            micro_kernel_generic(k, ap.data(), bp.data(), c.data(), n, beta, mr, nr);
            sgemm_reference(ta, tb, mr, nr, k, 1.0f, a.data(), lda, b.data(), ldb, beta, ref.data(), n);
          } else {
            sgemm(pool, ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, beta, c.data(), n);
            sgemm_reference(ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, beta, ref.data(), n);
          }
          double e = 0;
          for (size_t i = 0; i < c.size(); ++i) e = std::max(e, static_cast<double>(std::fabs(c[i] - ref[i])));
          *err = e;
        },
        [err](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, *err); });
  });
}

// Back-to-back pool.run calls of 2 and 8 tasks alternately, counting how often each task ran: every
// task must run exactly once per call. With delayUs = D > 0 the workers join a job D us late and
// hold each claimed task number for 3D us, and the caller waits 2D us between calls, which replays
// the interleaving behind the rare sgemm failure (m130 n17 k513 beta1, error 0.23): a worker that
// joined a call after it had finished claimed a stale number, and then ran it in the next call,
// which ran it as well. With delayUs = 0 it is a plain stress of the same handoff.
Napi::Value pool_check(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    const int threads = integer(o, "threads", 2, 2, 64);
    const int runs = integer(o, "runs", 1000, 1, 100000000);
    const int delay_us = integer(o, "delayUs", 0, 0, 100000);
    struct Counts {
      double duplicated = 0, missing = 0;
    };
    auto out = std::make_shared<Counts>();
    return AsyncCall::start(
        info.Env(),
        [=] {
          std::vector<std::atomic<int>> hits(8);  // before the pool: it outlives the workers
          ThreadPool pool(threads);
          pool.set_test_delays(delay_us, 3 * delay_us);
          for (int r = 0; r < runs; ++r) {
            const int tasks = r % 2 == 0 ? 2 : 8;
            for (int t = 0; t < tasks; ++t) hits[t].store(0, std::memory_order_relaxed);
            pool.run(tasks, [&](int64_t t, int) { hits[t].fetch_add(1, std::memory_order_relaxed); });
            for (int t = 0; t < tasks; ++t) {
              const int h = hits[t].load(std::memory_order_relaxed);
              if (h > 1) out->duplicated += h - 1;
              if (h < 1) out->missing += 1;
            }
            if (delay_us) std::this_thread::sleep_for(std::chrono::microseconds(2 * delay_us));
          }
        },
        [out](Napi::Env env) -> Napi::Value {
          Napi::Object r = Napi::Object::New(env);
          r.Set("duplicated", out->duplicated);
          r.Set("missing", out->missing);
          return r;
        });
  });
}

Napi::Value grad_check_js(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    const std::string objective = str(o, "objective", "sft");
    parse_objective(objective);
    const int samples = integer(o, "samples", 4, 1, 100);
    const double step = num(o, "step", 1e-2, 1e-6, 1);
    const uint64_t seed = static_cast<uint64_t>(num(o, "seed", 1, 0, 1e15));
    auto rows = std::make_shared<std::vector<GradCheckRow>>();
    return AsyncCall::start(
        info.Env(), [=] { *rows = grad_check(objective, samples, step, seed); },
        [rows](Napi::Env env) -> Napi::Value {
          Napi::Array a = Napi::Array::New(env, rows->size());
          for (size_t i = 0; i < rows->size(); ++i) {
            Napi::Object r = Napi::Object::New(env);
            r.Set("tensor", (*rows)[i].tensor);
            r.Set("maxAbsError", (*rows)[i].max_abs_error);
            r.Set("maxAbsGrad", (*rows)[i].max_abs_grad);
            r.Set("checked", (*rows)[i].checked);
            a.Set(static_cast<uint32_t>(i), r);
          }
          return a;
        });
  });
}

}  // namespace ts
