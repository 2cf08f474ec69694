// Optimizer steps: policy-gradient training on rollouts and the supervised warm-up.
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "engine/engine.h"
#include "engine/train-inputs.h"
#include "model/transformer.h"

namespace ts {

namespace {

void validate_rollouts(const Rollouts& r, const ModelConfig& c, int pad_id) {
  const size_t n = static_cast<size_t>(r.B) * r.T;
  if (r.B < 1 || r.T < 2 || r.T > c.context) fail("INVALID_ARGUMENT", "rollouts: need B >= 1 and 2 <= T <= context");
  if (r.tokens.size() != n || r.logprobs.size() != n || r.mask.size() != n || r.pad.size() != static_cast<size_t>(r.B) ||
      r.rewards.size() != static_cast<size_t>(r.B))
    fail("INVALID_ARGUMENT", "rollouts: array sizes do not match B x T");
  if (r.group < 1 || r.B % r.group != 0) fail("INVALID_ARGUMENT", "rollouts: B must be a multiple of groupSize");
  for (size_t i = 0; i < n; ++i) {
    if (r.tokens[i] < 0 || r.tokens[i] >= c.vocab) fail("INVALID_ARGUMENT", "rollouts: token id out of range");
    if (!std::isfinite(r.logprobs[i])) fail("NON_FINITE", "rollouts: log-probs contain NaN or Inf");
  }
  for (int b = 0; b < r.B; ++b) {
    if (r.pad[b] < 0 || r.pad[b] >= r.T) fail("INVALID_ARGUMENT", "rollouts: pad count out of range");
    if (!std::isfinite(r.rewards[b])) fail("NON_FINITE", "rollouts: rewards contain NaN or Inf");
  }
  (void)pad_id;
}

}  // namespace

std::vector<float> Engine::reference_logprobs(const Rollouts& r, const LossConfig& lc) {
  std::vector<float> ref_logp;
  if (lc.kl_coef <= 0) return ref_logp;
  const ModelConfig& c = layout_.config;
  if (!has_ref_) {
    // The frozen reference is the policy as it was at the first KL-penalised step.
    ref_ = DeviceBuffer(dev_.get(), static_cast<size_t>(layout_.total));
    dev_->copy_on_device(ref_.data(), params_.data(), layout_.total * 4);
    has_ref_ = true;
  }
  KvCache kv;
  alloc_kv(*dev_, c, r.B, r.T, kv);
  ChunkScratch s;
  alloc_chunk_scratch(*dev_, c, r.B, r.T, s);
  DeviceBuffer logits(dev_.get(), static_cast<size_t>(r.B) * r.T * c.vocab);
  forward_chunk(*dev_, layout_, ref_.data(), r.tokens.data(), r.pad.data(), r.B, r.T, 0, kv, s, logits.data(), true);
  ref_logp.resize(static_cast<size_t>(r.B) * r.T);
  token_logprobs(dev_->pool(), logits.data(), r.tokens.data(), r.B, r.T, c.vocab, lc.pad_id, lc.temperature,
                 ref_logp.data());
  return ref_logp;
}

// Adds this batch's gradient into grads_ (backward accumulates; callers zero or rescale first).
// `acts` is the caller's, sized for r: train() reuses one across its epochs (its logits are the
// engine's largest buffer).
LossStats Engine::gradient_pass(const Rollouts& r, const LossConfig& lc, const std::vector<float>& adv,
                                const std::vector<float>& ref_logp, TrainActs& acts) {
  const ModelConfig& c = layout_.config;
  forward_train(*dev_, layout_, params_.data(), r.tokens.data(), r.pad.data(), acts);
  LossStats ls = policy_loss(dev_->pool(), lc, acts.logits, r.tokens.data(), r.mask.data(), adv.data(),
                             r.logprobs.data(), ref_logp.empty() ? nullptr : ref_logp.data(), r.B, r.T, c.vocab,
                             acts.dlogits);
  backward(*dev_, layout_, params_.data(), r.tokens.data(), r.pad.data(), acts, grads_.data());
  return ls;
}

void validate_train(const Rollouts& r, const TrainOptions& o, const ModelConfig& c, int pad_id) {
  validate_rollouts(r, c, pad_id);
  if (o.epochs < 1 || o.epochs > 16) fail("INVALID_ARGUMENT", "epochs must be in [1, 16]");
}

LossConfig loss_config(const TrainOptions& o, int pad_id) {
  LossConfig lc = o.loss;
  lc.pad_id = pad_id;
  return lc;
}

std::vector<float> advantages(const Rollouts& r, const LossConfig& lc) {
  return lc.objective == Objective::Ppo ? batch_advantages(r.rewards) : group_advantages(r.rewards, r.group);
}

void reward_stats(const Rollouts& r, TrainStats& st) {
  double mean = 0, var = 0;
  for (float x : r.rewards) mean += x;
  mean /= r.B;
  for (float x : r.rewards) var += (x - mean) * (x - mean);
  st.reward_mean = mean;
  st.reward_std = std::sqrt(var / r.B);
}

TrainStats Engine::train(const Rollouts& r, const TrainOptions& o) {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  require_no_pending("train()");
  validate_train(r, o, layout_.config, task_->pad_id());
  const LossConfig lc = loss_config(o, task_->pad_id());
  const std::vector<float> adv = advantages(r, lc);
  TrainStats st;
  reward_stats(r, st);
  const std::vector<float> ref_logp = reference_logprobs(r, lc);
  TrainActs acts;
  alloc_train_acts(*dev_, layout_.config, r.B, r.T, acts);
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    std::memset(grads_.data(), 0, sizeof(float) * layout_.total);
    LossStats ls = gradient_pass(r, lc, adv, ref_logp, acts);
    st.grad_norm = adamw_step(dev_->pool(), layout_, params_.data(), grads_.data(), m_.data(), v_.data(),
                              ++adam_step_, o.adam);
    ++weight_version_;
    st.loss = ls.loss, st.kl = ls.kl, st.clip_fraction = ls.clip_fraction, st.ratio_mean = ls.ratio_mean;
    st.is_weight_mean = ls.is_weight_mean, st.entropy = ls.entropy;
    st.tokens += static_cast<int64_t>(r.B) * r.T;
  }
  st.weight_version = weight_version_;
  return st;
}

WarmupResult Engine::warmup(const WarmupOptions& o) {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  require_no_pending("warmup()");
  if (o.max_steps < 0 || o.batch_size < 1 || o.batch_size > 65536 || o.probe_every < 1)
    fail("INVALID_ARGUMENT", "warmup: maxSteps >= 0, batchSize in [1, 65536], probeEvery >= 1");
  const ModelConfig& c = layout_.config;
  const int B = o.batch_size;
  const int T = task_->max_prompt_tokens() + task_->max_new_tokens();
  const int pad = task_->pad_id();
  WarmupResult res;
  TrainActs acts;
  alloc_train_acts(*dev_, c, B, T, acts);
  std::vector<int32_t> tokens(static_cast<size_t>(B) * T), pads(B);
  std::vector<uint8_t> mask(static_cast<size_t>(B) * T);
  LossConfig lc;
  lc.objective = Objective::Sft;
  lc.pad_id = pad;
  for (int step = 0; step < o.max_steps; ++step) {
    if (warmup_interrupt_.exchange(false)) {
      res.interrupted = true;
      return res;
    }
    if (step % o.probe_every == 0) {
      res.probe_accuracy = evaluate("probe", 0, 0).accuracy;
      if (res.probe_accuracy >= o.target_accuracy) {
        res.reached = true;
        break;
      }
    }
    // Teacher forcing: the prompt is right-aligned at a fixed width so that the answer always starts
    // at the same column, exactly as at sampling time (left padding).
    const int P = task_->max_prompt_tokens();
    std::fill(tokens.begin(), tokens.end(), pad);
    std::fill(mask.begin(), mask.end(), 0);
    for (int b = 0; b < B; ++b) {
      Problem p = task_->sample_train(rng_);
      std::vector<int32_t> pt = task_->encode(p.prompt), at = task_->encode(p.answer);
      at.push_back(task_->end_id());
      pads[b] = P - static_cast<int>(pt.size());
      int32_t* row = tokens.data() + static_cast<int64_t>(b) * T;
      std::copy(pt.begin(), pt.end(), row + pads[b]);
      for (size_t i = 0; i < at.size(); ++i) {
        row[P + i] = at[i];
        mask[static_cast<int64_t>(b) * T + P + i] = 1;
      }
    }
    std::memset(grads_.data(), 0, sizeof(float) * layout_.total);
    forward_train(*dev_, layout_, params_.data(), tokens.data(), pads.data(), acts);
    LossStats ls = policy_loss(dev_->pool(), lc, acts.logits, tokens.data(), mask.data(), nullptr, nullptr, nullptr,
                               B, T, c.vocab, acts.dlogits);
    backward(*dev_, layout_, params_.data(), tokens.data(), pads.data(), acts, grads_.data());
    adamw_step(dev_->pool(), layout_, params_.data(), grads_.data(), m_.data(), v_.data(), ++adam_step_, o.adam);
    ++weight_version_;
    res.steps = step + 1;
    res.loss = ls.loss;
    res.token_accuracy = ls.tokens ? static_cast<double>(ls.correct) / ls.tokens : 0;
  }
  if (!res.reached) {
    res.probe_accuracy = evaluate("probe", 0, 0).accuracy;
    res.reached = res.probe_accuracy >= o.target_accuracy;
  }
  warmup_interrupt_.store(false);  // one that came as this warm-up ended is not for the next
  return res;
}

}  // namespace ts
