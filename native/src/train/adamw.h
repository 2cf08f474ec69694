#pragma once
#include <cstdint>

#include "device/thread-pool.h"
#include "model/param-layout.h"

namespace ts {

struct AdamWConfig {
  float lr = 3e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.99f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled; applied to matrices only (not LayerNorm, biases)
  float clip = 1.0f;          // global grad-norm clip; 0 disables
};

// Global L2 norm, summed in fixed blocks in a fixed order (thread-count independent).
double grad_norm(ThreadPool& pool, const float* g, int64_t n);

// One AdamW update with bias correction at 1-based `step`. Returns the pre-clip grad norm; throws
// NON_FINITE (and leaves params untouched) when the gradient has a NaN/Inf.
double adamw_step(ThreadPool& pool, const ParamLayout& l, float* params, float* grads, float* m, float* v,
                  int64_t step, const AdamWConfig& c);

}  // namespace ts
