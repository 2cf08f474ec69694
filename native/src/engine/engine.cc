#include "engine/engine.h"

#include <cmath>

#include "common/clock.h"
#include "common/error.h"
#include "device/cpu-device.h"

namespace ts {

Engine::Engine(const EngineOptions& o) : rng_(o.seed) {
  if (o.threads < 1 || o.threads > 256) fail("INVALID_ARGUMENT", "device.threads must be in [1, 256]");
  task_ = make_task(o.task);
  ModelConfig c = o.preset.empty() ? o.model : preset_config(o.preset, task_->vocab_size());
  c.vocab = task_->vocab_size();
  validate_config(c);
  if (task_->max_prompt_tokens() + task_->max_new_tokens() > c.context)
    fail("INVALID_ARGUMENT", "model context " + std::to_string(c.context) + " is shorter than the task's prompt + answer (" +
                                 std::to_string(task_->max_prompt_tokens() + task_->max_new_tokens()) + ")");
  layout_ = make_layout(c);
  dev_ = std::make_unique<CpuDevice>(o.threads, o.memory_bytes, o.use_blas);
  alloc_state();
  std::fill(m_.data(), m_.data() + m_.size(), 0.0f);
  std::fill(v_.data(), v_.data() + v_.size(), 0.0f);
  // Init draws come from a generator derived from the seed, so sampling streams do not depend on
  // the model size.
  Rng init(o.seed ^ 0x1A17ull);
  std::vector<float> host(layout_.total);
  init_params(layout_, host.data(), init);
  dev_->copy_to_device(params_.data(), host.data(), host.size() * 4);
}

Engine::~Engine() = default;

void Engine::alloc_state() {
  const size_t n = static_cast<size_t>(layout_.total);
  params_ = DeviceBuffer(dev_.get(), n);
  grads_ = DeviceBuffer(dev_.get(), n);
  m_ = DeviceBuffer(dev_.get(), n);
  v_ = DeviceBuffer(dev_.get(), n);
  if (has_ref_) ref_ = DeviceBuffer(dev_.get(), n);
}

uint64_t Engine::state_bytes() const {
  return static_cast<uint64_t>(layout_.total) * 4 * (4 + (has_ref_ ? 1 : 0));
}

void Engine::begin_call(Profile& p) {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  dev_->reset_peak();
  dev_->reset_flops();
  p = Profile{};
}

void Engine::end_call(Profile& p, double t0) {
  p.seconds = now_seconds() - t0;
  p.flops = dev_->flops();
  p.peak_arena_bytes = dev_->peak_bytes();
}

void Engine::reset_optimizer() {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  std::fill(m_.data(), m_.data() + m_.size(), 0.0f);
  std::fill(v_.data(), v_.data() + v_.size(), 0.0f);
  adam_step_ = 0;
}

std::vector<Problem> Engine::pick_problems(const GenerateOptions& o) {
  std::vector<Problem> out;
  out.reserve(static_cast<size_t>(o.num_prompts) * o.group);
  if (o.split == "train") {
    for (int i = 0; i < o.num_prompts; ++i) {
      Problem p = task_->sample_train(rng_);
      for (int g = 0; g < o.group; ++g) out.push_back(p);
    }
    return out;
  }
  if (o.split != "eval" && o.split != "probe") fail("INVALID_ARGUMENT", "split must be train, eval or probe");
  const auto& set = o.split == "eval" ? task_->eval_set() : task_->probe_set();
  const int n = std::min<int>(o.num_prompts, static_cast<int>(set.size()));
  for (int i = 0; i < n; ++i)
    for (int g = 0; g < o.group; ++g) out.push_back(set[i]);
  return out;
}

Rollouts Engine::generate(const GenerateOptions& o) {
  if (o.num_prompts < 1 || o.group < 1 || static_cast<int64_t>(o.num_prompts) * o.group > 65536)
    fail("INVALID_ARGUMENT", "numPrompts * groupSize must be in [1, 65536]");
  if (!(o.sample.temperature >= 0) || !(o.sample.top_p > 0 && o.sample.top_p <= 1))
    fail("INVALID_ARGUMENT", "temperature must be >= 0 and topP in (0, 1]");
  if (!(o.sample.partial_tail >= 0 && o.sample.partial_tail < 1) || o.sample.max_carries < 0)
    fail("INVALID_ARGUMENT", "partialTail must be in [0, 1) and maxCarries >= 0");
  std::vector<Problem> problems = pick_problems(o);
  GenContext ctx{dev_.get(), &layout_, params_.data(), task_.get(), &weight_version_, nullptr};
  if (subscriber_) ctx.poll_weights = [this] { return pull_weights() >= 0; };
  const bool carrying = o.split == "train" && !carry_.empty() && carry_group_ == o.group;
  if (o.split == "train" && !carrying) drop_carried();
  if (!carrying && o.sample.partial_tail <= 0) return ts::generate(ctx, problems, o.group, o.sample, rng_);
  // Carried groups go first, then the fresh ones.
  std::vector<Carried> carried(carry_.begin(), carry_.end());
  carried.resize(carry_.size() + problems.size());
  problems.insert(problems.begin(), carry_problems_.begin(), carry_problems_.end());
  drop_carried();
  Rollouts all = ts::generate(ctx, problems, o.group, o.sample, rng_, &carried);
  std::vector<int> finished;
  for (int g = 0; g < all.B / o.group; ++g) {
    const int first = g * o.group;
    bool whole = true;
    for (int m = 0; m < o.group; ++m) whole = whole && all.done[first + m];
    if (whole) {
      for (int m = 0; m < o.group; ++m) finished.push_back(first + m);
      continue;
    }
    for (int m = 0; m < o.group; ++m) {
      const int b = first + m;
      const int64_t from = static_cast<int64_t>(b) * all.T + all.start[b];
      Carried k;
      k.tokens.assign(all.tokens.begin() + from, all.tokens.begin() + from + all.lengths[b]);
      k.logprobs.assign(all.logprobs.begin() + from, all.logprobs.begin() + from + all.lengths[b]);
      k.versions.assign(all.versions.begin() + from, all.versions.begin() + from + all.lengths[b]);
      k.carries = carried[b].carries + 1;
      carry_.push_back(std::move(k));
      carry_problems_.push_back(problems[b]);
    }
  }
  carry_group_ = o.group;
  Rollouts out = select_rows(all, finished);
  out.new_tokens = all.new_tokens;
  out.carried_groups = carried_groups();
  return out;
}

void Engine::drop_carried() {
  carry_.clear();
  carry_problems_.clear();
  carry_group_ = 0;
}

EvalResult Engine::evaluate(const std::string& split, int limit, int samples) {
  const auto& set = split == "probe" ? task_->probe_set() : task_->eval_set();
  if (split != "probe" && split != "eval") fail("INVALID_ARGUMENT", "split must be eval or probe");
  GenerateOptions o;
  o.split = split;
  o.group = 1;
  o.num_prompts = limit > 0 ? std::min<int>(limit, static_cast<int>(set.size())) : static_cast<int>(set.size());
  o.sample.temperature = 0.0f;
  // Greedy decoding draws nothing, but generate() seeds per-sequence generators from the engine
  // RNG; evaluating must not shift the training stream, so save and restore it.
  const auto saved = rng_.state();
  Rollouts r = generate(o);
  rng_.set_state(saved);
  EvalResult e;
  e.problems = r.B;
  double sum = 0;
  for (float x : r.rewards) sum += x;
  e.accuracy = r.B ? sum / r.B : 0;
  for (int b = 0; b < std::min(samples, r.B); ++b) {
    e.prompts.push_back(set[b].prompt);
    e.completions.push_back(task_->decode(r.tokens.data() + static_cast<int64_t>(b) * r.T + r.P, r.lengths[b]));
  }
  return e;
}

}  // namespace ts
