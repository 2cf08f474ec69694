#pragma once
// All parameters live in one flat fp32 buffer; this table gives each tensor its name, shape and
// offset. Names and shapes follow Hugging Face GPT-2 (Conv1D weights stored [in, out], so
// `x @ W`), except lm_head.weight which is a Linear [vocab, d_model] because our head is untied.
#include <cstdint>
#include <string>
#include <vector>

#include "common/rng.h"
#include "model/config.h"

namespace ts {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  int64_t size = 0;
};

struct LayerOffsets {
  int64_t ln1_g, ln1_b, w_qkv, b_qkv, w_proj, b_proj, ln2_g, ln2_b, w_fc, b_fc, w_fc2, b_fc2;
};

struct ParamLayout {
  ModelConfig config;
  std::vector<TensorSpec> tensors;
  int64_t wte = 0, wpe = 0, lnf_g = 0, lnf_b = 0, lm_head = 0;
  std::vector<LayerOffsets> layer;
  int64_t total = 0;
};

ParamLayout make_layout(const ModelConfig& c);
// GPT-2 init: N(0, 0.02), residual projections scaled by 1/sqrt(2 * layers), LayerNorm (1, 0).
void init_params(const ParamLayout& l, float* params, Rng& rng);

}  // namespace ts
