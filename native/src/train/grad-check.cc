#include "train/grad-check.h"

#include <cmath>
#include <cstring>

#include "common/rng.h"
#include "device/cpu-device.h"
#include "model/transformer.h"
#include "train/policy-loss.h"

namespace ts {

std::vector<GradCheckRow> grad_check(const std::string& objective, int samples_per_tensor, double step, uint64_t seed) {
  ModelConfig c;
  c.vocab = 7, c.context = 8, c.d_model = 8, c.layers = 2, c.heads = 2, c.mlp_mult = 4;
  const ParamLayout l = make_layout(c);
  CpuDevice dev(1, 64ull << 20);
  Rng rng(seed);
  // Larger-than-GPT-2 weights so that every tensor's gradient is well above fp32 noise.
  std::vector<float> params(l.total);
  for (const auto& t : l.tensors) {
    const bool ln_w = t.name.find("ln_") != std::string::npos && t.name.find("weight") != std::string::npos;
    for (int64_t i = 0; i < t.size; ++i) params[t.offset + i] = (ln_w ? 1.0f : 0.0f) + 0.3f * rng.normal();
  }
  const int B = 3, T = 6, pad_id = c.vocab - 1;
  std::vector<int32_t> tokens(B * T, pad_id), pads{0, 1, 2};
  std::vector<uint8_t> mask(B * T, 0);
  for (int b = 0; b < B; ++b)
    for (int t = pads[b]; t < T; ++t) {
      tokens[b * T + t] = static_cast<int32_t>(rng.below(pad_id));
      if (t > pads[b]) mask[b * T + t] = 1;
    }
  std::vector<float> adv{1.0f, -0.5f, 0.7f};
  LossConfig lc;
  lc.objective = parse_objective(objective);
  lc.pad_id = pad_id;
  lc.kl_coef = objective == "grpo" ? 0.1f : 0.0f;
  TrainActs acts;
  alloc_train_acts(dev, c, B, T, acts);
  std::vector<float> old_logp(B * T), ref_logp(B * T);
  forward_train(dev, l, params.data(), tokens.data(), pads.data(), acts);
  token_logprobs(dev.pool(), acts.logits, tokens.data(), B, T, c.vocab, pad_id, 1.0f, old_logp.data());
  // A reference slightly off the current policy, so the KL term has a non-zero gradient.
  for (int i = 0; i < B * T; ++i) ref_logp[i] = old_logp[i] - 0.3f * rng.uniform();
  auto loss_at = [&](const std::vector<float>& p) {
    forward_train(dev, l, p.data(), tokens.data(), pads.data(), acts);
    return policy_loss(dev.pool(), lc, acts.logits, tokens.data(), mask.data(), adv.data(), old_logp.data(),
                       lc.kl_coef > 0 ? ref_logp.data() : nullptr, B, T, c.vocab, acts.dlogits)
        .loss;
  };
  loss_at(params);
  std::vector<float> grads(l.total, 0.0f);
  backward(dev, l, params.data(), tokens.data(), pads.data(), acts, grads.data());
  std::vector<GradCheckRow> rows;
  for (const auto& t : l.tensors) {
    GradCheckRow r;
    r.tensor = t.name;
    for (int s = 0; s < samples_per_tensor; ++s) {
      int64_t i = t.offset + static_cast<int64_t>(rng.below(t.size));
      // Position rows beyond the longest sequence, and the pad token's embedding, get no gradient;
      // sample rows that are used.
      if (t.name == "transformer.wpe.weight") i = t.offset + static_cast<int64_t>(rng.below(T * c.d_model));
      if (t.name == "transformer.wte.weight") i = t.offset + static_cast<int64_t>(rng.below((c.vocab - 1) * c.d_model));
      std::vector<float> p = params;
      const float h = static_cast<float>(step);
      p[i] = params[i] + h;
      const double lp = loss_at(p);
      p[i] = params[i] - h;
      const double lm = loss_at(p);
      const double fd = (lp - lm) / (2.0 * h);
      r.max_abs_error = std::max(r.max_abs_error, std::fabs(fd - grads[i]));
      r.max_abs_grad = std::max(r.max_abs_grad, std::fabs(static_cast<double>(grads[i])));
      ++r.checked;
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ts
