// Gradient accumulation over micro-batches: the spatial pipeline trains on a step's rollouts as
// they arrive and takes one optimizer step when the step's last micro-batch is in.
//
// grads_ always holds the mean gradient over every trained token accumulated so far: before a
// micro-batch with n tokens is added to N already there, grads_ is rescaled by N / (N + n) and the
// new loss is divided by N + n. After k micro-batches grads_ is what one train() on their
// concatenation computes (up to float rounding), for objectives whose advantages do not span
// micro-batches (GRPO, reinforce_is: per group; PPO's batch-wide advantage is per micro-batch here).
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "engine/engine.h"
#include "engine/train-inputs.h"
#include "model/transformer.h"

namespace ts {

namespace {

bool same_options(const TrainOptions& a, const TrainOptions& b) {
  const LossConfig &x = a.loss, &y = b.loss;
  const AdamWConfig &p = a.adam, &q = b.adam;
  return x.objective == y.objective && x.clip == y.clip && x.kl_coef == y.kl_coef &&
         x.is_truncation == y.is_truncation && x.temperature == y.temperature && p.lr == q.lr && p.beta1 == q.beta1 &&
         p.beta2 == q.beta2 && p.eps == q.eps && p.weight_decay == q.weight_decay && p.clip == q.clip &&
         a.epochs == b.epochs;
}

}  // namespace

void Engine::require_no_pending(const char* what) const {
  if (acc_.micro_batches > 0)
    fail("INVALID_ARGUMENT", std::string(what) + " with " + std::to_string(acc_.micro_batches) +
                                 " accumulated micro-batch(es) pending; call applyGradients() or discardGradients() first");
}

TrainStats Engine::accumulate(const Rollouts& r, const TrainOptions& o) {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  validate_train(r, o, layout_.config, task_->pad_id());
  if (o.epochs != 1) fail("INVALID_ARGUMENT", "accumulate: epochs must be 1 (one optimizer step per apply)");
  if (acc_.micro_batches > 0 && !same_options(acc_.options, o))
    fail("INVALID_ARGUMENT", "accumulate: options differ from those of the pending micro-batches");
  LossConfig lc = loss_config(o, task_->pad_id());
  const std::vector<float> adv = advantages(r, lc);
  const std::vector<float> ref_logp = reference_logprobs(r, lc);
  const int64_t n = trained_tokens(r.mask.data(), r.B, r.T);
  const int64_t before = acc_.micro_batches > 0 ? acc_.trained_tokens : 0;
  const int64_t total = before + n;
  if (before == 0) {
    std::memset(grads_.data(), 0, sizeof(float) * layout_.total);
  } else if (n > 0) {
    const float keep = static_cast<float>(static_cast<double>(before) / static_cast<double>(total));
    float* g = grads_.data();
    parallel_range(dev_->pool(), layout_.total, 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) g[i] *= keep;
    });
  }
  lc.norm_tokens = total;
  LossStats ls;
  try {
    TrainActs acts;
    alloc_train_acts(*dev_, layout_.config, r.B, r.T, acts);
    ls = gradient_pass(r, lc, adv, ref_logp, acts);
  } catch (...) {
    discard_gradients();  // grads_ were already rescaled: the sum cannot be trusted any more
    throw;
  }

  if (acc_.micro_batches == 0) acc_ = GradAccumulator{}, acc_.options = o;
  ++acc_.micro_batches;
  acc_.trained_tokens = total;
  acc_.tokens += static_cast<int64_t>(r.B) * r.T;
  for (float x : r.rewards) acc_.reward_sum += x, acc_.reward_sq += static_cast<double>(x) * x;
  acc_.rewards += r.B;
  const double w = static_cast<double>(ls.tokens);
  acc_.loss += ls.loss * w, acc_.kl += ls.kl * w, acc_.clip_fraction += ls.clip_fraction * w;
  acc_.ratio_mean += ls.ratio_mean * w, acc_.is_weight_mean += ls.is_weight_mean * w, acc_.entropy += ls.entropy * w;

  TrainStats st;
  reward_stats(r, st);
  st.loss = ls.loss, st.kl = ls.kl, st.clip_fraction = ls.clip_fraction, st.ratio_mean = ls.ratio_mean;
  st.is_weight_mean = ls.is_weight_mean, st.entropy = ls.entropy;
  st.tokens = static_cast<int64_t>(r.B) * r.T;
  st.weight_version = weight_version_;
  st.micro_batches = acc_.micro_batches;
  return st;
}

TrainStats Engine::apply_gradients() {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  if (acc_.micro_batches == 0)
    fail("INVALID_ARGUMENT", "applyGradients: nothing accumulated (call train({accumulate: true}) first)");
  const GradAccumulator a = acc_;
  // Whatever happens below, these gradients are spent: a NON_FINITE gradient would fail again.
  acc_ = GradAccumulator{};
  host_grads_ = HostBuffer();
  TrainStats st;
  st.grad_norm =
      adamw_step(dev_->pool(), layout_, params_.data(), grads_.data(), m_.data(), v_.data(), adam_step_ + 1, a.options.adam);
  ++adam_step_;
  ++weight_version_;
  const double n = a.trained_tokens > 0 ? static_cast<double>(a.trained_tokens) : 1.0;
  st.loss = a.loss / n, st.kl = a.kl / n, st.clip_fraction = a.clip_fraction / n, st.ratio_mean = a.ratio_mean / n;
  st.is_weight_mean = a.is_weight_mean / n, st.entropy = a.entropy / n;
  const double mean = a.reward_sum / a.rewards;
  st.reward_mean = mean;
  st.reward_std = std::sqrt(std::max(0.0, a.reward_sq / a.rewards - mean * mean));
  st.tokens = a.tokens;
  st.weight_version = weight_version_;
  st.micro_batches = a.micro_batches;
  return st;
}

int Engine::discard_gradients() {
  const int n = acc_.micro_batches;
  acc_ = GradAccumulator{};
  host_grads_ = HostBuffer();
  return n;
}

}  // namespace ts
