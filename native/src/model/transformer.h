#pragma once
// Pre-LayerNorm GPT-2-style decoder. Two entry points share every kernel and every gemm shape along
// the K dimension, so the log-probs the sampler records equal the ones training recomputes
// bit for bit (the GRPO ratio of an on-policy token is exactly 1):
//   forward_train/backward  - full sequences, activations kept for the backward pass;
//   forward_chunk           - a chunk of positions per sequence against a KV cache (prefill, decode,
//                             and forward-only scoring such as the KL reference).
#include <cstdint>
#include <vector>

#include "device/device.h"
#include "model/param-layout.h"

namespace ts {

struct TrainActs {
  struct Layer {
    float *x_in, *ln1, *ln1_m, *ln1_r, *qkv, *probs, *att, *x_mid, *ln2, *ln2_m, *ln2_r, *fc, *gelu;
  };
  int B = 0, T = 0;
  DeviceBuffer buf;
  std::vector<Layer> layer;
  float *x_out, *lnf, *lnf_m, *lnf_r, *logits;
  float *dx, *dln, *dqkv, *datt, *dfc, *dlogits;
};

void alloc_train_acts(Device& dev, const ModelConfig& c, int B, int T, TrainActs& a);
// tokens/pad: [B, T] and [B]; fills a.logits [B*T, vocab].
void forward_train(Device& dev, const ParamLayout& l, const float* params, const int32_t* tokens,
                   const int32_t* pad, TrainActs& a);
// Reads a.dlogits, accumulates into grads (caller zeroes them).
void backward(Device& dev, const ParamLayout& l, const float* params, const int32_t* tokens, const int32_t* pad,
              TrainActs& a, float* grads);

struct KvCache {
  int B = 0, T = 0;
  DeviceBuffer k, v;  // [layers][B][T][d]
};
void alloc_kv(Device& dev, const ModelConfig& c, int B, int T, KvCache& kv);

struct ChunkScratch {
  int rows = 0;
  DeviceBuffer buf;
  float *x, *ln, *qkv, *att, *fc, *act, *last;
};
void alloc_chunk_scratch(Device& dev, const ModelConfig& c, int B, int max_chunk, ChunkScratch& s);

// tokens: [B, L] for positions t0..t0+L-1. logits: [B, vocab] for the chunk's last position, or
// [B*L, vocab] when all_rows.
void forward_chunk(Device& dev, const ParamLayout& l, const float* params, const int32_t* tokens, const int32_t* pad,
                   int B, int L, int t0, KvCache& kv, ChunkScratch& s, float* logits, bool all_rows);

// Multiply-add count of one forward token at sequence length t (for profiles).
uint64_t forward_flops_per_token(const ModelConfig& c, int t);

}  // namespace ts
