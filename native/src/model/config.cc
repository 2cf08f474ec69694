#include "model/config.h"

#include "common/error.h"

namespace ts {

ModelConfig preset_config(const std::string& name, int vocab) {
  ModelConfig c;
  c.vocab = vocab;
  if (name == "micro") {
    c.d_model = 32, c.layers = 1, c.heads = 2;
  } else if (name == "tiny") {
    c.d_model = 128, c.layers = 2, c.heads = 4;
  } else if (name == "small") {
    c.d_model = 256, c.layers = 2, c.heads = 4;
  } else {
    fail("INVALID_ARGUMENT", "unknown model preset '" + name + "' (micro, tiny, small)");
  }
  return c;
}

void validate_config(const ModelConfig& c) {
  auto bad = [](const std::string& m) { fail("INVALID_ARGUMENT", "model config: " + m); };
  if (c.vocab < 2 || c.vocab > 65536) bad("vocab must be in [2, 65536]");
  if (c.context < 2 || c.context > 4096) bad("context must be in [2, 4096]");
  if (c.d_model < 4 || c.d_model > 4096) bad("d_model must be in [4, 4096]");
  if (c.layers < 1 || c.layers > 64) bad("layers must be in [1, 64]");
  if (c.heads < 1 || c.d_model % c.heads != 0) bad("heads must divide d_model");
  if (c.mlp_mult < 1 || c.mlp_mult > 16) bad("mlp multiplier must be in [1, 16]");
}

}  // namespace ts
