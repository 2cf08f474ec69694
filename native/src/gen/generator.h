#pragma once
// Batched sampling with a KV cache. Prompts are left-padded to a common length P; the cache holds
// P + max_new positions. Between decoding steps the generator asks `poll_weights` whether newer
// weights arrived (in-flight update, PipelineRL): sequences keep going, their KV cache from older
// weights is kept, and every sampled token records the version it was sampled under.
#include <cstdint>
#include <functional>
#include <vector>

#include "common/rng.h"
#include "device/device.h"
#include "model/param-layout.h"
#include "tasks/task.h"

namespace ts {

struct SampleOptions {
  float temperature = 1.0f;  // 0 = greedy
  float top_p = 1.0f;
  int max_new_tokens = 0;    // 0 = the task's default
  int stop_token = -1;       // -1 = the task's <end>
  // Partial rollouts (APRIL, Kimi k1.5): decoding stops once at most this share of the prompt groups
  // is still unfinished; those groups are returned unfinished (Rollouts::done) for the caller to
  // carry into its next call. 0: every sequence runs to its end.
  float partial_tail = 0.0f;
  // A group carried this many times must finish in this call (bounds its weight lag).
  int max_carries = 0;
};

// A sequence carried over from an earlier call: its completion so far, prefilled after its prompt
// (its KV cache rebuilt under the current weights) and kept with the log-probs and weight versions
// it was sampled under, before it samples on.
struct Carried {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<int32_t> versions;
  int carries = 0;
};

struct Rollouts {
  int B = 0, T = 0, P = 0, group = 1;
  std::vector<int32_t> tokens;    // [B, T]: left pads, prompt, completion, trailing pads
  std::vector<int32_t> pad;       // [B] left pads per sequence
  std::vector<float> logprobs;    // [B, T]: log-prob under the sampling distribution (temperature applied,
                                  // top-p truncation not); 0 outside the completion
  std::vector<int32_t> versions;  // [B, T]: weight version a token was sampled under, -1 outside
  std::vector<uint8_t> mask;      // [B, T]: 1 on sampled tokens (through the stop token)
  std::vector<float> rewards;     // [B]
  std::vector<int32_t> lengths;   // [B] completion lengths
  std::vector<uint8_t> done;      // [B] 1 when the sequence ended (stop token or length bound)
  std::vector<int32_t> start;     // [B] column of the completion's first token (P unless carried)
  double occupancy = 1.0;         // mean share of the batch's sequences still decoding per step
  int carried_groups = 0;         // groups held back unfinished (Engine::generate with partial rollouts)
  int64_t new_tokens = 0;
  int inflight_updates = 0;
};

struct GenContext {
  Device* dev;
  const ParamLayout* layout;
  const float* params;         // may be rewritten by poll_weights between steps
  const Task* task;
  const int64_t* version;      // current weight version, read when each token is sampled
  std::function<bool()> poll_weights;  // may be empty
};

// One rollout per entry of `problems`; groups are consecutive entries of the same problem.
// `carried`, when given, has one entry per problem (empty tokens: a fresh sequence).
Rollouts generate(GenContext& ctx, const std::vector<Problem>& problems, int group, const SampleOptions& o, Rng& rng,
                  const std::vector<Carried>* carried = nullptr);

// The rows `rows` of `r` (whole groups, in order) as rollouts of their own.
Rollouts select_rows(const Rollouts& r, const std::vector<int>& rows);

}  // namespace ts
