#include "model/param-layout.h"

#include <cmath>

namespace ts {

ParamLayout make_layout(const ModelConfig& c) {
  ParamLayout l;
  l.config = c;
  const int64_t d = c.d_model, f = c.d_ff();
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    TensorSpec t;
    t.name = name;
    t.shape = shape;
    t.size = 1;
    for (auto s : shape) t.size *= s;
    t.offset = l.total;
    l.total += t.size;
    l.tensors.push_back(t);
    return t.offset;
  };
  l.wte = add("transformer.wte.weight", {c.vocab, d});
  l.wpe = add("transformer.wpe.weight", {c.context, d});
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    LayerOffsets o{};
    o.ln1_g = add(p + "ln_1.weight", {d});
    o.ln1_b = add(p + "ln_1.bias", {d});
    o.w_qkv = add(p + "attn.c_attn.weight", {d, 3 * d});
    o.b_qkv = add(p + "attn.c_attn.bias", {3 * d});
    o.w_proj = add(p + "attn.c_proj.weight", {d, d});
    o.b_proj = add(p + "attn.c_proj.bias", {d});
    o.ln2_g = add(p + "ln_2.weight", {d});
    o.ln2_b = add(p + "ln_2.bias", {d});
    o.w_fc = add(p + "mlp.c_fc.weight", {d, f});
    o.b_fc = add(p + "mlp.c_fc.bias", {f});
    o.w_fc2 = add(p + "mlp.c_proj.weight", {f, d});
    o.b_fc2 = add(p + "mlp.c_proj.bias", {d});
    l.layer.push_back(o);
  }
  l.lnf_g = add("transformer.ln_f.weight", {d});
  l.lnf_b = add("transformer.ln_f.bias", {d});
  l.lm_head = add("lm_head.weight", {c.vocab, d});
  return l;
}

void init_params(const ParamLayout& l, float* params, Rng& rng) {
  const float resid = 0.02f / std::sqrt(2.0f * l.config.layers);
  for (const auto& t : l.tensors) {
    float* p = params + t.offset;
    const bool is_ln_weight = t.name.find("ln_") != std::string::npos && t.name.find(".weight") != std::string::npos;
    const bool is_bias = t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
    const bool is_resid = t.name.find("c_proj.weight") != std::string::npos;
    for (int64_t i = 0; i < t.size; ++i) {
      if (is_ln_weight) p[i] = 1.0f;
      else if (is_bias) p[i] = 0.0f;
      else p[i] = rng.normal() * (is_resid ? resid : 0.02f);
    }
  }
}

}  // namespace ts
