#pragma once
// Causal multi-head attention over left-padded sequences: key j of sequence b is visible to the
// query at position t when pad[b] <= j <= t. A query that is itself padding sees nothing and
// outputs zeros (its logits are never used).
#include <cstdint>

#include "device/thread-pool.h"

namespace ts {

struct AttnShape {
  int batch;     // sequences
  int queries;   // positions in this chunk (L)
  int t0;        // position of the chunk's first query
  int heads;
  int head_dim;
};

// q: row (b * L + i) at q + row * q_stride. k/v: position j of sequence b at
// k + b * kv_batch_stride + j * kv_stride. out: [B * L, heads * head_dim]. probs (optional, training
// only, t0 == 0): [B, H, L, L].
void attention_forward(ThreadPool& pool, const AttnShape& s, const float* q, int64_t q_stride, const float* k,
                       const float* v, int64_t kv_stride, int64_t kv_batch_stride, const int32_t* pad, float* out,
                       float* probs);

// Training only (t0 == 0, q/k/v inside one qkv buffer [B*L, 3d]). Writes dqkv (same layout).
void attention_backward(ThreadPool& pool, const AttnShape& s, const float* qkv, const float* probs,
                        const float* dout, const int32_t* pad, float* dqkv);

}  // namespace ts
