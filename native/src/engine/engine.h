#pragma once
// One engine = one job's model on one device: weights, optimizer moments and (per call) KV cache and
// activations in the device arena; a task; an RNG. Not thread-safe by design: the binding runs at
// most one call per instance at a time (ENGINE_BUSY otherwise) and the TS facade queues calls.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/rng.h"
#include "device/device.h"
#include "device/host-memory.h"
#include "gen/generator.h"
#include "model/param-layout.h"
#include "sync/weight-shm.h"
#include "tasks/task.h"
#include "train/adamw.h"
#include "train/policy-loss.h"

namespace ts {

struct TrainActs;  // model/transformer.h

struct EngineOptions {
  int threads = 2;
  uint64_t memory_bytes = 1ull << 30;
  bool use_blas = false;
  std::string preset = "tiny";  // empty: use `model` as given
  ModelConfig model;
  TaskConfig task;
  uint64_t seed = 1;
};

struct Profile {
  double seconds = 0;
  int64_t tokens = 0;
  uint64_t flops = 0;
  uint64_t peak_arena_bytes = 0;
};

struct GenerateOptions {
  int num_prompts = 64;
  int group = 8;
  std::string split = "train";  // train: fresh problems; eval / probe: the fixed sets (first num_prompts)
  SampleOptions sample;
};

struct TrainOptions {
  LossConfig loss;
  AdamWConfig adam;
  int epochs = 1;
};

struct TrainStats {
  double loss = 0, reward_mean = 0, reward_std = 0, kl = 0, clip_fraction = 0, ratio_mean = 0, is_weight_mean = 0,
         entropy = 0, grad_norm = 0;
  int64_t tokens = 0;
  int64_t weight_version = 0;
  double seconds = 0;
  int micro_batches = 1;  // accumulate: pending after this one; apply: how many the step combined
};

struct WarmupOptions {
  int max_steps = 2000;
  int batch_size = 64;
  double target_accuracy = 0.3;
  int probe_every = 25;
  AdamWConfig adam{1e-3f, 0.9f, 0.99f, 1e-8f, 0.0f, 1.0f};
};

struct WarmupResult {
  int steps = 0;
  double probe_accuracy = 0;
  double loss = 0;
  double token_accuracy = 0;
  bool reached = false;
  bool interrupted = false;  // interrupt_warmup() stopped it between two steps
};

struct EvalResult {
  double accuracy = 0;
  int problems = 0;
  std::vector<std::string> prompts, completions;
};

class Engine {
 public:
  explicit Engine(const EngineOptions& o);
  ~Engine();

  const ModelConfig& config() const { return layout_.config; }
  const ParamLayout& layout() const { return layout_; }
  const Task& task() const { return *task_; }
  Device& device() { return *dev_; }
  int64_t weight_version() const { return weight_version_; }
  int64_t optimizer_step() const { return adam_step_; }
  bool onloaded() const { return onloaded_; }
  uint64_t state_bytes() const;

  void begin_call(Profile& p);  // NOT_ONLOADED check + profile counters
  void end_call(Profile& p, double t0);

  // Training split with `sample.partial_tail` > 0: returns the groups that finished and carries the
  // rest into the next call (Rollouts::carried_groups says how many).
  Rollouts generate(const GenerateOptions& o);
  int carried_groups() const { return carry_group_ > 0 ? static_cast<int>(carry_.size()) / carry_group_ : 0; }
  void drop_carried();
  TrainStats train(const Rollouts& r, const TrainOptions& o);
  // Gradient accumulation (engine-accumulate.cc): accumulate() adds one micro-batch's gradient,
  // scaled so that the sum is the gradient of one train() on all micro-batches together;
  // apply_gradients() takes one optimizer step over the sum; discard_gradients() drops it.
  TrainStats accumulate(const Rollouts& r, const TrainOptions& o);
  TrainStats apply_gradients();
  int discard_gradients();
  int pending_micro_batches() const { return acc_.micro_batches; }
  WarmupResult warmup(const WarmupOptions& o);
  // Any thread: the warm-up running now, or the next one to start, stops before its next step (a
  // warm-up clears it as it ends). A cancelled job held its devices for the rest of a warm-up that
  // cannot be split (15 s on CPU, minutes on a GPU).
  void interrupt_warmup() { warmup_interrupt_.store(true); }
  EvalResult evaluate(const std::string& split, int limit, int samples);
  void reset_optimizer();

  // Onload/offload (engine-state.cc).
  void offload();
  void onload(uint64_t fencing_token);
  uint64_t last_fencing_token() const { return last_token_; }

  // Checkpoints (engine-state.cc). Returns the files written.
  std::vector<std::string> save_checkpoint(const std::string& dir, bool with_optimizer);
  void load_checkpoint(const std::string& dir, bool with_optimizer, int64_t weight_version, int64_t optimizer_step,
                       const std::array<uint64_t, 4>& rng_state);
  std::array<uint64_t, 4> rng_state() const { return rng_.state(); }

  // Weight sync (engine-state.cc).
  std::string publish_weights(const std::string& name);
  int64_t attach_weights(const std::string& name);
  int64_t pull_weights();  // applies a newer published version now; -1 if none
  int64_t published_version() const;

 private:
  std::atomic<bool> warmup_interrupt_{false};
  struct GradAccumulator {
    int micro_batches = 0;
    int64_t trained_tokens = 0;  // the loss denominator so far
    int64_t tokens = 0;
    int64_t rewards = 0;
    double reward_sum = 0, reward_sq = 0;
    double loss = 0, kl = 0, clip_fraction = 0, ratio_mean = 0, is_weight_mean = 0, entropy = 0;  // token-weighted
    TrainOptions options;
  };

  void alloc_state();
  void require_no_pending(const char* what) const;
  std::vector<float> reference_logprobs(const Rollouts& r, const LossConfig& lc);
  LossStats gradient_pass(const Rollouts& r, const LossConfig& lc, const std::vector<float>& adv,
                          const std::vector<float>& ref_logp, TrainActs& acts);
  std::vector<Problem> pick_problems(const GenerateOptions& o);
  uint64_t layout_hash() const;
  const float* host_or_device(const DeviceBuffer& d, const HostBuffer& h) const;

  std::unique_ptr<Device> dev_;
  std::unique_ptr<Task> task_;
  ParamLayout layout_;
  DeviceBuffer params_, grads_, m_, v_, ref_;
  HostBuffer host_params_, host_m_, host_v_, host_ref_, host_grads_;
  GradAccumulator acc_;
  bool has_ref_ = false;
  bool onloaded_ = true;
  uint64_t last_token_ = 0;
  int64_t adam_step_ = 0;
  int64_t weight_version_ = 0;
  Rng rng_;
  std::unique_ptr<WeightShm> publisher_, subscriber_;
  // Partial rollouts: the unfinished groups of the last training-split generate(), carried into the
  // next. Not checkpointed: a resumed job samples them anew.
  std::vector<Problem> carry_problems_;
  std::vector<Carried> carry_;
  int carry_group_ = 0;
};

}  // namespace ts
