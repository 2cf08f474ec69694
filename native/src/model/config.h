#pragma once
#include <string>

namespace ts {

struct ModelConfig {
  int vocab = 14;
  int context = 32;
  int d_model = 128;
  int layers = 2;
  int heads = 4;
  int mlp_mult = 4;
  int head_dim() const { return d_model / heads; }
  int d_ff() const { return d_model * mlp_mult; }
};

// "micro" (tests), "tiny" (the DESIGN §6 recipe, ~400k params), "small" (256 wide). The vocabulary
// always comes from the task; context defaults to 32, enough for every built-in task.
ModelConfig preset_config(const std::string& name, int vocab);
void validate_config(const ModelConfig& c);

}  // namespace ts
