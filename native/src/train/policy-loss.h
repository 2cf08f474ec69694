#pragma once
// Token-level objectives over a batch of full sequences. Token t is predicted by logits row t - 1;
// mask[b*T + t] says whether token t is trained on. Every objective is written as a per-token
// coefficient g = dLoss/dlogp, so one softmax backward serves them all.
#include <cstdint>
#include <string>
#include <vector>

#include "device/thread-pool.h"

namespace ts {

enum class Objective { Sft, Grpo, Ppo, ReinforceIs };

Objective parse_objective(const std::string& s);

struct LossConfig {
  Objective objective = Objective::Grpo;
  float clip = 0.2f;          // PPO/GRPO ratio clip
  float kl_coef = 0.0f;       // k3 KL to the reference policy (needs ref_logp)
  float is_truncation = 5.0f; // reinforce_is: importance weights truncated at c
  float temperature = 1.0f;
  int pad_id = -1;            // masked out of the output head
  // Gradient denominator: 0 = this batch's trained tokens (a per-token mean). Gradient
  // accumulation sets the running total over all micro-batches so far, which keeps the summed
  // gradient a mean over the whole step's tokens.
  int64_t norm_tokens = 0;
};

struct LossStats {
  double loss = 0, kl = 0, clip_fraction = 0, ratio_mean = 0, is_weight_mean = 0, entropy = 0;
  int64_t tokens = 0;
  int64_t correct = 0;  // argmax == target (SFT accuracy)
};

// Fills p with softmax(row / temperature), pad column forced to 0, and returns the log-normaliser.
// The sampler and the trainer both use it, so recorded and recomputed log-probs agree exactly.
float softmax_row(const float* row, int V, int pad_id, float temperature, float* p, float* lse_out);

// log p(tokens[t]) under softmax(logits[t-1] / temperature) for every t >= 1 (0 where t == 0).
void token_logprobs(ThreadPool& pool, const float* logits, const int32_t* tokens, int B, int T, int V, int pad_id,
                    float temperature, float* out);

// Tokens an objective trains on: masked and not at position 0 (nothing predicts it).
int64_t trained_tokens(const uint8_t* mask, int B, int T);

// advantage: one value per sequence. old_logp: behaviour log-probs (rollout). ref_logp: may be null.
LossStats policy_loss(ThreadPool& pool, const LossConfig& c, const float* logits, const int32_t* tokens,
                      const uint8_t* mask, const float* advantage, const float* old_logp, const float* ref_logp,
                      int B, int T, int V, float* dlogits);

// (r - mean) / (std + 1e-4) within each group of `group` consecutive sequences (population std).
std::vector<float> group_advantages(const std::vector<float>& rewards, int group);
// r - mean over the batch (PPO without a learned value function).
std::vector<float> batch_advantages(const std::vector<float>& rewards);

}  // namespace ts
