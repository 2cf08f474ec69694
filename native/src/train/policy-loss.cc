#include "train/policy-loss.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"

namespace ts {

Objective parse_objective(const std::string& s) {
  if (s == "grpo") return Objective::Grpo;
  if (s == "ppo") return Objective::Ppo;
  if (s == "reinforce_is") return Objective::ReinforceIs;
  if (s == "sft") return Objective::Sft;
  fail("INVALID_ARGUMENT", "algorithm must be grpo, ppo or reinforce_is (got '" + s + "')");
}

float softmax_row(const float* row, int V, int pad_id, float temperature, float* p, float* lse_out) {
  float mx = -INFINITY;
  for (int k = 0; k < V; ++k)
    if (k != pad_id) mx = std::max(mx, row[k] / temperature);
  double sum = 0;
  for (int k = 0; k < V; ++k) {
    p[k] = k == pad_id ? 0.0f : std::exp(row[k] / temperature - mx);
    sum += p[k];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int k = 0; k < V; ++k) p[k] *= inv;
  *lse_out = mx + static_cast<float>(std::log(sum));
  return *lse_out;
}

void token_logprobs(ThreadPool& pool, const float* logits, const int32_t* tokens, int B, int T, int V, int pad_id,
                    float temperature, float* out) {
  parallel_range(pool, static_cast<int64_t>(B) * T, 64, [&](int64_t r0, int64_t r1) {
    std::vector<float> p(V);
    for (int64_t i = r0; i < r1; ++i) {
      const int t = static_cast<int>(i % T);
      if (t == 0) {
        out[i] = 0;
        continue;
      }
      float lse;
      softmax_row(logits + (i - 1) * V, V, pad_id, temperature, p.data(), &lse);
      const int y = tokens[i];
      out[i] = (y == pad_id || y < 0 || y >= V) ? 0.0f : logits[(i - 1) * V + y] / temperature - lse;
    }
  });
}

int64_t trained_tokens(const uint8_t* mask, int B, int T) {
  const int64_t N = static_cast<int64_t>(B) * T;
  int64_t n = 0;
  for (int64_t i = 0; i < N; ++i) n += (i % T) != 0 && mask[i];
  return n;
}

LossStats policy_loss(ThreadPool& pool, const LossConfig& c, const float* logits, const int32_t* tokens,
                      const uint8_t* mask, const float* advantage, const float* old_logp, const float* ref_logp,
                      int B, int T, int V, float* dlogits) {
  const int64_t N = static_cast<int64_t>(B) * T;
  const int64_t ntok = trained_tokens(mask, B, T);
  LossStats st;
  st.tokens = ntok;
  std::memset(dlogits, 0, sizeof(float) * N * V);
  if (ntok == 0) return st;
  struct Row {
    double loss = 0, kl = 0, clipped = 0, ratio = 0, isw = 0, ent = 0, correct = 0;
  };
  std::vector<Row> rows(N);
  const float inv_n = 1.0f / static_cast<float>(c.norm_tokens > 0 ? c.norm_tokens : ntok);
  parallel_range(pool, N, 64, [&](int64_t r0, int64_t r1) {
    std::vector<float> p(V);
    for (int64_t i = r0; i < r1; ++i) {
      const int t = static_cast<int>(i % T);
      if (t == 0 || !mask[i]) continue;
      const int b = static_cast<int>(i / T);
      const float* row = logits + (i - 1) * V;
      float lse;
      softmax_row(row, V, c.pad_id, c.temperature, p.data(), &lse);
      const int y = tokens[i];
      const float logp = row[y] / c.temperature - lse;
      Row& R = rows[i];
      int arg = 0;
      for (int k = 1; k < V; ++k)
        if (p[k] > p[arg]) arg = k;
      R.correct = arg == y;
      for (int k = 0; k < V; ++k)
        if (p[k] > 0) R.ent -= p[k] * std::log(p[k]);
      float g = 0;  // dLoss/dlogp for this token (before averaging)
      const float A = advantage ? advantage[b] : 0.0f;
      switch (c.objective) {
        case Objective::Sft:
          R.loss = -logp;
          g = -1.0f;
          break;
        case Objective::Grpo:
        case Objective::Ppo: {
          const float ratio = std::exp(logp - old_logp[i]);
          const float clipped = std::min(std::max(ratio, 1.0f - c.clip), 1.0f + c.clip);
          const float s1 = ratio * A, s2 = clipped * A;
          R.ratio = ratio;
          if (s2 < s1) {
            R.loss = -s2;
            R.clipped = 1;
            g = 0.0f;
          } else {
            R.loss = -s1;
            g = -A * ratio;
          }
          break;
        }
        case Objective::ReinforceIs: {
          const float w = std::min(std::exp(logp - old_logp[i]), c.is_truncation);
          R.isw = w;
          R.ratio = std::exp(logp - old_logp[i]);
          R.clipped = w >= c.is_truncation;
          R.loss = -w * A * logp;
          g = -w * A;
          break;
        }
      }
      if (ref_logp && c.kl_coef > 0) {
        const float d = ref_logp[i] - logp;
        const float kl = std::exp(d) - d - 1.0f;
        R.kl = kl;
        R.loss += c.kl_coef * kl;
        g += c.kl_coef * (1.0f - std::exp(d));
      } else if (ref_logp) {
        const float d = ref_logp[i] - logp;
        R.kl = std::exp(d) - d - 1.0f;
      }
      const float coef = g * inv_n / c.temperature;
      float* dl = dlogits + (i - 1) * V;
      for (int k = 0; k < V; ++k) dl[k] = k == c.pad_id ? 0.0f : coef * ((k == y ? 1.0f : 0.0f) - p[k]);
    }
  });
  for (const Row& R : rows) {
    st.loss += R.loss, st.kl += R.kl, st.clip_fraction += R.clipped, st.ratio_mean += R.ratio;
    st.is_weight_mean += R.isw, st.entropy += R.ent, st.correct += static_cast<int64_t>(R.correct);
  }
  st.loss /= ntok, st.kl /= ntok, st.clip_fraction /= ntok, st.ratio_mean /= ntok, st.is_weight_mean /= ntok;
  st.entropy /= ntok;
  if (!std::isfinite(st.loss)) fail("NON_FINITE", "loss is NaN or Inf (check rollouts' log-probs and rewards)");
  return st;
}

std::vector<float> group_advantages(const std::vector<float>& rewards, int group) {
  std::vector<float> adv(rewards.size());
  for (size_t g0 = 0; g0 < rewards.size(); g0 += group) {
    const size_t g1 = std::min(rewards.size(), g0 + group);
    double mean = 0, var = 0;
    for (size_t i = g0; i < g1; ++i) mean += rewards[i];
    mean /= (g1 - g0);
    for (size_t i = g0; i < g1; ++i) var += (rewards[i] - mean) * (rewards[i] - mean);
    const double sd = std::sqrt(var / (g1 - g0));
    for (size_t i = g0; i < g1; ++i) adv[i] = static_cast<float>((rewards[i] - mean) / (sd + 1e-4));
  }
  return adv;
}

std::vector<float> batch_advantages(const std::vector<float>& rewards) {
  double mean = 0;
  for (float r : rewards) mean += r;
  mean /= std::max<size_t>(1, rewards.size());
  std::vector<float> adv(rewards.size());
  for (size_t i = 0; i < rewards.size(); ++i) adv[i] = static_cast<float>(rewards[i] - mean);
  return adv;
}

}  // namespace ts
