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

Rollouts generate(GenContext& ctx, const std::vector<Problem>& problems, int group, const SampleOptions& o, Rng& rng,
                  const std::vector<Carried>* carried) {
  const Task& task = *ctx.task;
  const ModelConfig& c = ctx.layout->config;
  const int B = static_cast<int>(problems.size());
  if (carried && static_cast<int>(carried->size()) != B) fail("INVALID_ARGUMENT", "one carried entry per problem");
  const int V = c.vocab, pad_id = task.pad_id();
  const int stop = o.stop_token >= 0 ? o.stop_token : task.end_id();
  const int max_new = o.max_new_tokens > 0 ? o.max_new_tokens : task.max_new_tokens();
  // A row's prefix is its prompt and, when carried, the completion so far: prefilled together, so a
  // carried sequence picks up where it stopped (its KV cache rebuilt under the current weights).
  std::vector<int> kept(B, 0);
  if (carried)
    for (int b = 0; b < B; ++b) {
      const Carried& k = (*carried)[b];
      if (k.tokens.size() >= static_cast<size_t>(max_new) || k.logprobs.size() != k.tokens.size() ||
          k.versions.size() != k.tokens.size())
        fail("INVALID_ARGUMENT", "a carried sequence must be shorter than maxNewTokens, its arrays of one length");
      kept[b] = static_cast<int>(k.tokens.size());
    }
  std::vector<std::vector<int32_t>> prefix(B);
  int P = 0;
  for (int b = 0; b < B; ++b) {
    prefix[b] = task.encode(problems[b].prompt);
    if (kept[b]) prefix[b].insert(prefix[b].end(), (*carried)[b].tokens.begin(), (*carried)[b].tokens.end());
    P = std::max<int>(P, static_cast<int>(prefix[b].size()));
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
  r.start.assign(B, P);
  for (int b = 0; b < B; ++b) {
    const int64_t row = static_cast<int64_t>(b) * T;
    r.pad[b] = P - static_cast<int>(prefix[b].size());
    std::copy(prefix[b].begin(), prefix[b].end(), r.tokens.begin() + row + r.pad[b]);
    r.start[b] = P - kept[b];
    r.lengths[b] = kept[b];
    for (int i = 0; i < kept[b]; ++i) {
      // The carried completion, as it was sampled: its log-probs and weight versions.
      const int64_t at = row + r.start[b] + i;
      r.logprobs[at] = (*carried)[b].logprobs[i], r.versions[at] = (*carried)[b].versions[i], r.mask[at] = 1;
    }
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
  // bit-identical to what a full prefill would have computed. A carried row has a prefix of its own.
  std::vector<int> unique_of(B);  // row -> index of the prefilled row it copies
  std::vector<int> unique_rows;
  for (int b = 0; b < B; ++b) {
    const int first = group > 1 && B % group == 0 ? b - b % group : b;
    if (b != first && kept[b] == 0 && kept[first] == 0 && problems[b].prompt == problems[first].prompt) {
      unique_of[b] = unique_of[first];
      continue;
    }
    unique_of[b] = static_cast<int>(unique_rows.size());
    unique_rows.push_back(b);
  }
  const int U = static_cast<int>(unique_rows.size());
  std::vector<int32_t> chunk(static_cast<size_t>(U) * P), upad(U);
  for (int u = 0; u < U; ++u) {
    const int64_t b = unique_rows[u];
    upad[u] = r.pad[b];
    std::copy(r.tokens.begin() + b * T, r.tokens.begin() + b * T + P, chunk.begin() + static_cast<int64_t>(u) * P);
  }
  forward_chunk(dev, *ctx.layout, ctx.params, chunk.data(), upad.data(), U, P, 0, kv, scratch, logits.data(), false);
  if (U < B) {
    const int64_t row = static_cast<int64_t>(T) * c.d_model;  // one sequence's cache in one layer
    const int64_t layer = static_cast<int64_t>(B) * row;
    // Descending: a row's prefilled source sits at an index no greater than its own, so no source
    // is overwritten before every row that copies it has been filled.
    for (int64_t b = B - 1; b >= 0; --b) {
      const int64_t u = unique_of[b];
      if (u == b) continue;
      for (int li = 0; li < c.layers; ++li) {
        std::memcpy(kv.k.data() + li * layer + b * row, kv.k.data() + li * layer + u * row, sizeof(float) * P * c.d_model);
        std::memcpy(kv.v.data() + li * layer + b * row, kv.v.data() + li * layer + u * row, sizeof(float) * P * c.d_model);
      }
      std::memcpy(logits.data() + b * V, logits.data() + u * V, sizeof(float) * V);
    }
  }
  // Partial rollouts need whole groups: a group is finished when all its sequences are. A carried
  // sequence must fit the next call's context beside a prompt and maxNewTokens; one that would not
  // is finished now.
  const bool partial = o.partial_tail > 0 && group >= 1 && B % group == 0;
  const int groups = partial ? B / group : 0;
  const int tail_allowed = partial ? static_cast<int>(std::floor(o.partial_tail * groups)) : 0;
  const int carry_room = c.context - max_new - task.max_prompt_tokens();
  std::vector<uint8_t>& done = r.done;
  done.assign(B, 0);
  double active_sum = 0;
  int iterations = 0;
  for (int i = 0; i < max_new; ++i) {
    const int t = P + i;
    const int32_t version = static_cast<int32_t>(*ctx.version);
    active_sum += static_cast<double>(std::count(done.begin(), done.end(), 0));
    ++iterations;
    parallel_range(dev.pool(), B, 16, [&](int64_t b0, int64_t b1) {
      std::vector<float> p(V);
      std::vector<int> order(V);
      for (int64_t b = b0; b < b1; ++b) {
        if (done[b]) continue;
        float lp;
        const int32_t tok = sample_token(logits.data() + b * V, V, pad_id, o, srng[b], p.data(), order.data(), &lp);
        const int64_t at = b * T + t;
        r.tokens[at] = tok, r.logprobs[at] = lp, r.versions[at] = version, r.mask[at] = 1;
        r.lengths[b] = kept[b] + i + 1;
        // The length bound counts the carried tokens too.
        if (tok == stop || r.lengths[b] >= max_new) done[b] = 1;
      }
    });
    if (std::all_of(done.begin(), done.end(), [](uint8_t d) { return d != 0; }) || i + 1 == max_new) break;
    if (partial) {
      int unfinished = 0;
      bool must_wait = false;
      for (int g = 0; g < groups && !must_wait; ++g) {
        bool finished = true;
        for (int m = 0; m < group; ++m) {
          const int b = g * group + m;
          if (done[b]) continue;
          finished = false;
          // A group carried max_carries times, or too long to carry, finishes now.
          must_wait = must_wait || r.lengths[b] > carry_room || (kept[b] > 0 && (*carried)[b].carries >= o.max_carries);
        }
        if (!finished) ++unfinished;
      }
      if (!must_wait && unfinished <= tail_allowed) break;
    }
    if (ctx.poll_weights && ctx.poll_weights()) ++r.inflight_updates;
    std::vector<int32_t> step(B);
    for (int b = 0; b < B; ++b) step[b] = r.tokens[static_cast<int64_t>(b) * T + t];
    forward_chunk(dev, *ctx.layout, ctx.params, step.data(), r.pad.data(), B, 1, t, kv, scratch, logits.data(),
                  false);
  }
  r.occupancy = iterations > 0 && B > 0 ? active_sum / (static_cast<double>(iterations) * B) : 1.0;
  for (int b = 0; b < B; ++b) {
    r.new_tokens += r.lengths[b] - kept[b];
    r.rewards[b] =
        done[b] ? task.reward(problems[b], r.tokens.data() + static_cast<int64_t>(b) * T + r.start[b], r.lengths[b])
                : 0.0f;
  }
  for (float x : r.logprobs)
    if (!std::isfinite(x)) fail("NON_FINITE", "sampling produced a non-finite log-prob (weights contain NaN?)");
  return r;
}

Rollouts select_rows(const Rollouts& r, const std::vector<int>& rows) {
  Rollouts out;
  out.B = static_cast<int>(rows.size()), out.T = r.T, out.P = r.P, out.group = r.group;
  out.inflight_updates = r.inflight_updates;
  out.occupancy = r.occupancy;
  const int64_t T = r.T;
  auto span = [&](const auto& from, auto& to) {
    to.resize(static_cast<size_t>(out.B) * T);
    for (size_t i = 0; i < rows.size(); ++i)
      std::copy(from.begin() + rows[i] * T, from.begin() + (rows[i] + 1) * T, to.begin() + static_cast<int64_t>(i) * T);
  };
  span(r.tokens, out.tokens);
  span(r.logprobs, out.logprobs);
  span(r.versions, out.versions);
  span(r.mask, out.mask);
  for (int row : rows) {
    out.start.push_back(r.start.empty() ? r.P : r.start[row]);
    out.pad.push_back(r.pad[row]);
    out.rewards.push_back(r.rewards[row]);
    out.lengths.push_back(r.lengths[row]);
    out.done.push_back(r.done.empty() ? 1 : r.done[row]);
  }
  return out;
}

}  // namespace ts
