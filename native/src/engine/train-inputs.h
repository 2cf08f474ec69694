#pragma once
// What train() and accumulate() derive from rollouts and options before any gradient: validation,
// the loss configuration, advantages and reward statistics. Shared so that both paths agree.
#include <vector>

#include "engine/engine.h"

namespace ts {

void validate_train(const Rollouts& r, const TrainOptions& o, const ModelConfig& c, int pad_id);
LossConfig loss_config(const TrainOptions& o, int pad_id);
// GRPO and reinforce_is: per group (exact under micro-batching by whole groups); PPO: per batch.
std::vector<float> advantages(const Rollouts& r, const LossConfig& lc);
void reward_stats(const Rollouts& r, TrainStats& st);

}  // namespace ts
