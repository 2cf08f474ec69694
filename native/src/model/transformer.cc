#include "model/transformer.h"

#include <algorithm>
#include <cstring>

#include "model/attention.h"
#include "model/kernels.h"

namespace ts {

namespace {

inline int position(int t, int pad) { return t >= pad ? t - pad : 0; }

void embed(ThreadPool& pool, const ParamLayout& l, const float* params, const int32_t* tokens, const int32_t* pad,
           int B, int L, int t0, float* x) {
  const int d = l.config.d_model;
  parallel_range(pool, static_cast<int64_t>(B) * L, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int b = static_cast<int>(r / L), t = t0 + static_cast<int>(r % L);
      const float* te = params + l.wte + static_cast<int64_t>(tokens[r]) * d;
      const float* pe = params + l.wpe + static_cast<int64_t>(position(t, pad[b])) * d;
      float* xr = x + r * d;
      for (int j = 0; j < d; ++j) xr[j] = te[j] + pe[j];
    }
  });
}

// y = x @ W + b, with W [k, n] row-major (GPT-2 Conv1D layout).
void linear(Device& dev, const float* x, int64_t rows, int k, const float* w, const float* b, int n, float* y,
            bool accumulate) {
  dev.gemm(Trans::No, Trans::No, static_cast<int>(rows), n, k, 1.0f, x, k, w, n, accumulate ? 1.0f : 0.0f, y, n);
  add_bias(dev.pool(), y, b, rows, n);
}

}  // namespace

uint64_t forward_flops_per_token(const ModelConfig& c, int t) {
  const uint64_t d = c.d_model, f = c.d_ff();
  const uint64_t per_layer = 2 * (d * 3 * d + d * d + 2 * d * f) + 4ull * t * d;
  return c.layers * per_layer + 2ull * d * c.vocab;
}

void alloc_train_acts(Device& dev, const ModelConfig& c, int B, int T, TrainActs& a) {
  const int64_t N = static_cast<int64_t>(B) * T, d = c.d_model, f = c.d_ff(), V = c.vocab;
  const int64_t per_layer = N * d * 6 + 4 * N + N * 3 * d + static_cast<int64_t>(B) * c.heads * T * T + 2 * N * f;
  const int64_t total = per_layer * c.layers + N * d * 2 + 2 * N + N * V * 2 + N * d * 3 + N * 3 * d + N * f;
  a.B = B, a.T = T;
  a.buf = DeviceBuffer();
  a.buf = DeviceBuffer(&dev, static_cast<size_t>(total));
  float* p = a.buf.data();
  auto take = [&](int64_t n) {
    float* r = p;
    p += n;
    return r;
  };
  a.layer.assign(c.layers, {});
  for (auto& L : a.layer) {
    L.x_in = take(N * d), L.ln1 = take(N * d), L.ln1_m = take(N), L.ln1_r = take(N);
    L.qkv = take(N * 3 * d), L.probs = take(static_cast<int64_t>(B) * c.heads * T * T), L.att = take(N * d);
    L.x_mid = take(N * d), L.ln2 = take(N * d), L.ln2_m = take(N), L.ln2_r = take(N);
    L.fc = take(N * f), L.gelu = take(N * f);
  }
  a.x_out = take(N * d), a.lnf = take(N * d), a.lnf_m = take(N), a.lnf_r = take(N), a.logits = take(N * V);
  a.dx = take(N * d), a.dln = take(N * d), a.datt = take(N * d), a.dqkv = take(N * 3 * d), a.dfc = take(N * f);
  a.dlogits = take(N * V);
}

void forward_train(Device& dev, const ParamLayout& l, const float* params, const int32_t* tokens,
                   const int32_t* pad, TrainActs& a) {
  const ModelConfig& c = l.config;
  const int B = a.B, T = a.T, d = c.d_model, f = c.d_ff();
  const int64_t N = static_cast<int64_t>(B) * T;
  ThreadPool& pool = dev.pool();
  embed(pool, l, params, tokens, pad, B, T, 0, a.layer[0].x_in);
  for (int li = 0; li < c.layers; ++li) {
    const LayerOffsets& o = l.layer[li];
    TrainActs::Layer& L = a.layer[li];
    float* x_next = li + 1 < c.layers ? a.layer[li + 1].x_in : a.x_out;
    layernorm_forward(pool, L.x_in, params + o.ln1_g, params + o.ln1_b, L.ln1, L.ln1_m, L.ln1_r, N, d);
    linear(dev, L.ln1, N, d, params + o.w_qkv, params + o.b_qkv, 3 * d, L.qkv, false);
    AttnShape s{B, T, 0, c.heads, c.head_dim()};
    attention_forward(pool, s, L.qkv, 3 * d, L.qkv + d, L.qkv + 2 * d, 3 * d, static_cast<int64_t>(T) * 3 * d, pad,
                      L.att, L.probs);
    dev.add_flops(static_cast<uint64_t>(B) * c.heads * T * T * c.head_dim() * 2);
    dev.copy_on_device(L.x_mid, L.x_in, sizeof(float) * N * d);
    linear(dev, L.att, N, d, params + o.w_proj, params + o.b_proj, d, L.x_mid, true);
    layernorm_forward(pool, L.x_mid, params + o.ln2_g, params + o.ln2_b, L.ln2, L.ln2_m, L.ln2_r, N, d);
    linear(dev, L.ln2, N, d, params + o.w_fc, params + o.b_fc, f, L.fc, false);
    gelu_forward(pool, L.fc, L.gelu, N * f);
    dev.copy_on_device(x_next, L.x_mid, sizeof(float) * N * d);
    linear(dev, L.gelu, N, f, params + o.w_fc2, params + o.b_fc2, d, x_next, true);
  }
  layernorm_forward(pool, a.x_out, params + l.lnf_g, params + l.lnf_b, a.lnf, a.lnf_m, a.lnf_r, N, d);
  dev.gemm(Trans::No, Trans::Yes, static_cast<int>(N), c.vocab, d, 1.0f, a.lnf, d, params + l.lm_head, d, 0.0f,
           a.logits, c.vocab);
}

void backward(Device& dev, const ParamLayout& l, const float* params, const int32_t* tokens, const int32_t* pad,
              TrainActs& a, float* grads) {
  const ModelConfig& c = l.config;
  const int B = a.B, T = a.T, d = c.d_model, f = c.d_ff(), V = c.vocab;
  const int Ni = B * T;
  const int64_t N = Ni;
  ThreadPool& pool = dev.pool();
  dev.gemm(Trans::No, Trans::No, Ni, d, V, 1.0f, a.dlogits, V, params + l.lm_head, d, 0.0f, a.dln, d);
  dev.gemm(Trans::Yes, Trans::No, V, d, Ni, 1.0f, a.dlogits, V, a.lnf, d, 1.0f, grads + l.lm_head, d);
  std::memset(a.dx, 0, sizeof(float) * N * d);
  layernorm_backward(pool, a.dln, a.x_out, a.lnf_m, a.lnf_r, params + l.lnf_g, a.dx, grads + l.lnf_g,
                     grads + l.lnf_b, N, d);
  for (int li = c.layers - 1; li >= 0; --li) {
    const LayerOffsets& o = l.layer[li];
    TrainActs::Layer& L = a.layer[li];
    // MLP branch: x_next = x_mid + gelu(ln2 @ W1 + b1) @ W2 + b2.
    dev.gemm(Trans::No, Trans::Yes, Ni, f, d, 1.0f, a.dx, d, params + o.w_fc2, d, 0.0f, a.dfc, f);
    dev.gemm(Trans::Yes, Trans::No, f, d, Ni, 1.0f, L.gelu, f, a.dx, d, 1.0f, grads + o.w_fc2, d);
    column_sum_add(pool, a.dx, N, d, grads + o.b_fc2);
    // The GELU output is dead once dW2 is done, so its buffer receives d(fc); separate input and
    // output keep the vectorised loop (an in-place call falls back to the aliasing-safe scalar path).
    float* dfc = L.gelu;
    gelu_backward(pool, L.fc, a.dfc, dfc, N * f);
    dev.gemm(Trans::No, Trans::Yes, Ni, d, f, 1.0f, dfc, f, params + o.w_fc, f, 0.0f, a.dln, d);
    dev.gemm(Trans::Yes, Trans::No, d, f, Ni, 1.0f, L.ln2, d, dfc, f, 1.0f, grads + o.w_fc, f);
    column_sum_add(pool, dfc, N, f, grads + o.b_fc);
    layernorm_backward(pool, a.dln, L.x_mid, L.ln2_m, L.ln2_r, params + o.ln2_g, a.dx, grads + o.ln2_g,
                       grads + o.ln2_b, N, d);
    // Attention branch: x_mid = x_in + attn(ln1) @ Wp + bp.
    dev.gemm(Trans::No, Trans::Yes, Ni, d, d, 1.0f, a.dx, d, params + o.w_proj, d, 0.0f, a.datt, d);
    dev.gemm(Trans::Yes, Trans::No, d, d, Ni, 1.0f, L.att, d, a.dx, d, 1.0f, grads + o.w_proj, d);
    column_sum_add(pool, a.dx, N, d, grads + o.b_proj);
    AttnShape s{B, T, 0, c.heads, c.head_dim()};
    attention_backward(pool, s, L.qkv, L.probs, a.datt, pad, a.dqkv);
    dev.add_flops(static_cast<uint64_t>(B) * c.heads * T * T * c.head_dim() * 4);
    dev.gemm(Trans::No, Trans::Yes, Ni, d, 3 * d, 1.0f, a.dqkv, 3 * d, params + o.w_qkv, 3 * d, 0.0f, a.dln, d);
    dev.gemm(Trans::Yes, Trans::No, d, 3 * d, Ni, 1.0f, L.ln1, d, a.dqkv, 3 * d, 1.0f, grads + o.w_qkv, 3 * d);
    column_sum_add(pool, a.dqkv, N, 3 * d, grads + o.b_qkv);
    layernorm_backward(pool, a.dln, L.x_in, L.ln1_m, L.ln1_r, params + o.ln1_g, a.dx, grads + o.ln1_g,
                       grads + o.ln1_b, N, d);
  }
  // Embedding rows are shared between sequences, so accumulate column-parallel in row order.
  float* gte = grads + l.wte;
  float* gpe = grads + l.wpe;
  parallel_range(pool, d, 16, [&](int64_t c0, int64_t c1) {
    for (int64_t r = 0; r < N; ++r) {
      const int b = static_cast<int>(r / T), t = static_cast<int>(r % T);
      if (t < pad[b]) continue;
      const float* dxr = a.dx + r * d;
      float* te = gte + static_cast<int64_t>(tokens[r]) * d;
      float* pe = gpe + static_cast<int64_t>(position(t, pad[b])) * d;
      for (int64_t j = c0; j < c1; ++j) {
        te[j] += dxr[j];
        pe[j] += dxr[j];
      }
    }
  });
}

void alloc_kv(Device& dev, const ModelConfig& c, int B, int T, KvCache& kv) {
  kv.B = B, kv.T = T;
  const size_t n = static_cast<size_t>(c.layers) * B * T * c.d_model;
  kv.k = DeviceBuffer();
  kv.v = DeviceBuffer();
  kv.k = DeviceBuffer(&dev, n);
  kv.v = DeviceBuffer(&dev, n);
}

void alloc_chunk_scratch(Device& dev, const ModelConfig& c, int B, int max_chunk, ChunkScratch& s) {
  const int64_t R = static_cast<int64_t>(B) * max_chunk, d = c.d_model;
  s.rows = static_cast<int>(R);
  s.buf = DeviceBuffer();
  s.buf = DeviceBuffer(&dev, static_cast<size_t>(R * (d * 3 + 3 * d + 2 * c.d_ff()) + static_cast<int64_t>(B) * d * 2));
  float* p = s.buf.data();
  s.x = p, p += R * d;
  s.ln = p, p += R * d;
  s.qkv = p, p += R * 3 * d;
  s.att = p, p += R * d;
  s.fc = p, p += R * c.d_ff();
  s.act = p, p += R * c.d_ff();
  s.last = p;
}

void forward_chunk(Device& dev, const ParamLayout& l, const float* params, const int32_t* tokens, const int32_t* pad,
                   int B, int L, int t0, KvCache& kv, ChunkScratch& s, float* logits, bool all_rows) {
  const ModelConfig& c = l.config;
  const int d = c.d_model, f = c.d_ff();
  const int64_t R = static_cast<int64_t>(B) * L;
  ThreadPool& pool = dev.pool();
  embed(pool, l, params, tokens, pad, B, L, t0, s.x);
  const int64_t layer_stride = static_cast<int64_t>(kv.B) * kv.T * d;
  for (int li = 0; li < c.layers; ++li) {
    const LayerOffsets& o = l.layer[li];
    layernorm_forward(pool, s.x, params + o.ln1_g, params + o.ln1_b, s.ln, nullptr, nullptr, R, d);
    linear(dev, s.ln, R, d, params + o.w_qkv, params + o.b_qkv, 3 * d, s.qkv, false);
    float* kl = kv.k.data() + li * layer_stride;
    float* vl = kv.v.data() + li * layer_stride;
    parallel_range(pool, R, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / L, t = t0 + r % L;
        std::memcpy(kl + (b * kv.T + t) * d, s.qkv + r * 3 * d + d, sizeof(float) * d);
        std::memcpy(vl + (b * kv.T + t) * d, s.qkv + r * 3 * d + 2 * d, sizeof(float) * d);
      }
    });
    AttnShape sh{B, L, t0, c.heads, c.head_dim()};
    attention_forward(pool, sh, s.qkv, 3 * d, kl, vl, d, static_cast<int64_t>(kv.T) * d, pad, s.att, nullptr);
    dev.add_flops(static_cast<uint64_t>(R) * (t0 + L) * d * 2);
    linear(dev, s.att, R, d, params + o.w_proj, params + o.b_proj, d, s.x, true);
    layernorm_forward(pool, s.x, params + o.ln2_g, params + o.ln2_b, s.ln, nullptr, nullptr, R, d);
    linear(dev, s.ln, R, d, params + o.w_fc, params + o.b_fc, f, s.fc, false);
    gelu_forward(pool, s.fc, s.act, R * f);
    linear(dev, s.act, R, f, params + o.w_fc2, params + o.b_fc2, d, s.x, true);
  }
  const float* src = s.x;
  int64_t rows = R;
  if (!all_rows) {
    for (int b = 0; b < B; ++b)
      std::memcpy(s.last + static_cast<int64_t>(b) * d, s.x + (static_cast<int64_t>(b) * L + L - 1) * d,
                  sizeof(float) * d);
    src = s.last;
    rows = B;
  }
  layernorm_forward(pool, src, params + l.lnf_g, params + l.lnf_b, s.ln, nullptr, nullptr, rows, d);
  dev.gemm(Trans::No, Trans::Yes, static_cast<int>(rows), c.vocab, d, 1.0f, s.ln, d, params + l.lm_head, d, 0.0f,
           logits, c.vocab);
}

}  // namespace ts
