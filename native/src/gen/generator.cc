#include "gen/generator.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "model/transformer.h"
#include "train/policy-loss.h"

namespace ts {

namespace {

// Returns the sampled token and writes its log-prob under softmax(logits / temperature).
int32_t sample_token(const float* row, int V, int pad_id, const SampleOptions& o, Rng& rng, float* p, int* order,
                     float* logp) {
  float lse;
  if (o.temperature <= 0.0f) {
    softmax_row(row, V, pad_id, 1.0f, p, &lse);
    int best = pad_id == 0 ? 1 : 0;
    for (int k = 0; k < V; ++k)
      if (k != pad_id && row[k] > row[best]) best = k;
    *logp = row[best] - lse;
    return best;
  }
  softmax_row(row, V, pad_id, o.temperature, p, &lse);
  int n = V;
  for (int k = 0; k < V; ++k) order[k] = k;
  if (o.top_p < 1.0f) {
    std::sort(order, order + V, [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    float cum = 0;
    for (n = 0; n < V;) {
      cum += p[order[n++]];
      if (cum >= o.top_p) break;
    }
  }
  float total = 0;
  for (int i = 0; i < n; ++i) total += p[order[i]];
  const float u = rng.uniform() * total;
  float acc = 0;
  int chosen = order[n - 1];
  for (int i = 0; i < n; ++i) {
    acc += p[order[i]];
    if (u < acc && p[order[i]] > 0) {
      chosen = order[i];
      break;
    }
  }
  if (chosen == pad_id) chosen = order[0];
  *logp = row[chosen] / o.temperature - lse;
  return chosen;
}

}  // namespace

Rollouts generate(GenContext& ctx, const std::vector<Problem>& problems, int group, const SampleOptions& o, Rng& rng) {
  const Task& task = *ctx.task;
  const ModelConfig& c = ctx.layout->config;
  const int B = static_cast<int>(problems.size());
  const int V = c.vocab, pad_id = task.pad_id();
  const int stop = o.stop_token >= 0 ? o.stop_token : task.end_id();
  const int max_new = o.max_new_tokens > 0 ? o.max_new_tokens : task.max_new_tokens();
  std::vector<std::vector<int32_t>> prompts(B);
  int P = 0;
  for (int b = 0; b < B; ++b) {
    prompts[b] = task.encode(problems[b].prompt);
    P = std::max<int>(P, static_cast<int>(prompts[b].size()));
  }
  const int T = P + max_new;
  if (T > c.context)
    fail("INVALID_ARGUMENT", "prompt (" + std::to_string(P) + ") + maxNewTokens (" + std::to_string(max_new) +
                                 ") exceeds the model context " + std::to_string(c.context));
  Rollouts r;
  r.B = B, r.T = T, r.P = P, r.group = group;
  r.tokens.assign(static_cast<size_t>(B) * T, pad_id);
  r.pad.assign(B, 0);
  r.logprobs.assign(static_cast<size_t>(B) * T, 0.0f);
  r.versions.assign(static_cast<size_t>(B) * T, -1);
  r.mask.assign(static_cast<size_t>(B) * T, 0);
  r.rewards.assign(B, 0.0f);
  r.lengths.assign(B, 0);
  for (int b = 0; b < B; ++b) {
    r.pad[b] = P - static_cast<int>(prompts[b].size());
    std::copy(prompts[b].begin(), prompts[b].end(), r.tokens.begin() + static_cast<int64_t>(b) * T + r.pad[b]);
  }
  // One generator per sequence, seeded serially: the draw of sequence b never depends on threads.
  std::vector<Rng> srng;
  srng.reserve(B);
  for (int b = 0; b < B; ++b) srng.emplace_back(rng.next());

  Device& dev = *ctx.dev;
  KvCache kv;
  alloc_kv(dev, c, B, T, kv);
  ChunkScratch scratch;
  alloc_chunk_scratch(dev, c, B, P, scratch);
  DeviceBuffer logits(&dev, static_cast<size_t>(B) * V);
  // Members of a group share their prompt: prefill one row per group, then copy its KV cache and
  // last-position logits to the other members. Rows of a gemm do not interact, so the copies are
  // bit-identical to what a full prefill would have computed.
  bool shared = group > 1 && B % group == 0;
  for (int b = 0; shared && b < B; ++b) shared = problems[b].prompt == problems[b - b % group].prompt;
  const int stride = shared ? group : 1;
  const int U = B / stride;
  std::vector<int32_t> chunk(static_cast<size_t>(U) * P), upad(U);
  for (int u = 0; u < U; ++u) {
    const int64_t b = static_cast<int64_t>(u) * stride;
    upad[u] = r.pad[b];
    std::copy(r.tokens.begin() + b * T, r.tokens.begin() + b * T + P, chunk.begin() + static_cast<int64_t>(u) * P);
  }
  forward_chunk(dev, *ctx.layout, ctx.params, chunk.data(), upad.data(), U, P, 0, kv, scratch, logits.data(), false);
  if (stride > 1) {
    const int64_t row = static_cast<int64_t>(T) * c.d_model;  // one sequence's cache in one layer
    const int64_t layer = static_cast<int64_t>(B) * row;
    // Descending, so that no unique row is overwritten before it has been spread.
    for (int u = U - 1; u >= 0; --u) {
      for (int g = stride - 1; g >= 0; --g) {
        const int64_t b = static_cast<int64_t>(u) * stride + g;
        if (b == u) continue;
        for (int li = 0; li < c.layers; ++li) {
          std::memcpy(kv.k.data() + li * layer + b * row, kv.k.data() + li * layer + u * row, sizeof(float) * P * c.d_model);
          std::memcpy(kv.v.data() + li * layer + b * row, kv.v.data() + li * layer + u * row, sizeof(float) * P * c.d_model);
        }
        std::memcpy(logits.data() + b * V, logits.data() + static_cast<int64_t>(u) * V, sizeof(float) * V);
      }
    }
  }
  std::vector<uint8_t> done(B, 0);
  for (int i = 0; i < max_new; ++i) {
    const int t = P + i;
    const int32_t version = static_cast<int32_t>(*ctx.version);
    parallel_range(dev.pool(), B, 16, [&](int64_t b0, int64_t b1) {
      std::vector<float> p(V);
      std::vector<int> order(V);
      for (int64_t b = b0; b < b1; ++b) {
        if (done[b]) continue;
        float lp;
        const int32_t tok = sample_token(logits.data() + b * V, V, pad_id, o, srng[b], p.data(), order.data(), &lp);
        const int64_t at = b * T + t;
        r.tokens[at] = tok, r.logprobs[at] = lp, r.versions[at] = version, r.mask[at] = 1;
        r.lengths[b] = i + 1;
        if (tok == stop) done[b] = 1;
      }
    });
    if (std::all_of(done.begin(), done.end(), [](uint8_t d) { return d != 0; }) || i + 1 == max_new) break;
    if (ctx.poll_weights && ctx.poll_weights()) ++r.inflight_updates;
    std::vector<int32_t> step(B);
    for (int b = 0; b < B; ++b) step[b] = r.tokens[static_cast<int64_t>(b) * T + t];
    forward_chunk(dev, *ctx.layout, ctx.params, step.data(), r.pad.data(), B, 1, t, kv, scratch, logits.data(),
                  false);
  }
  for (int b = 0; b < B; ++b) {
    r.new_tokens += r.lengths[b];
    r.rewards[b] = task.reward(problems[b], r.tokens.data() + static_cast<int64_t>(b) * T + P, r.lengths[b]);
  }
  for (float x : r.logprobs)
    if (!std::isfinite(x)) fail("NON_FINITE", "sampling produced a non-finite log-prob (weights contain NaN?)");
  return r;
}

}  // namespace ts
