// Moving engine state: offload/onload under fencing tokens, safetensors checkpoints, and weight
// publication through shared memory.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "engine/engine.h"
#include "io/safetensors.h"

namespace ts {

void Engine::offload() {
  if (!onloaded_) return;  // idempotent: a second offload has nothing left to move
  const size_t n = static_cast<size_t>(layout_.total);
  host_params_ = HostBuffer(n), host_m_ = HostBuffer(n), host_v_ = HostBuffer(n);
  dev_->copy_to_host(host_params_.data(), params_.data(), n * 4);
  dev_->copy_to_host(host_m_.data(), m_.data(), n * 4);
  dev_->copy_to_host(host_v_.data(), v_.data(), n * 4);
  if (has_ref_) {
    host_ref_ = HostBuffer(n);
    dev_->copy_to_host(host_ref_.data(), ref_.data(), n * 4);
  }
  // Pending accumulated gradients survive offload: the spatial pipeline releases the learner's
  // devices between micro-batches so other jobs may take turns within a step.
  if (acc_.micro_batches > 0) {
    host_grads_ = HostBuffer(n);
    dev_->copy_to_host(host_grads_.data(), grads_.data(), n * 4);
  }
  params_.reset(), grads_.reset(), m_.reset(), v_.reset(), ref_.reset();
  dev_->trim();
  onloaded_ = false;
}

void Engine::onload(uint64_t token) {
  if (token < last_token_)
    throw EngineError("STALE_FENCING_TOKEN", "fencing token " + std::to_string(token) +
                                                 " is older than the last one seen (" + std::to_string(last_token_) +
                                                 "); the device lock was lost",
                      token, last_token_);
  last_token_ = token;
  if (onloaded_) return;
  alloc_state();  // throws BUDGET_EXCEEDED before touching the host copies
  const size_t n = static_cast<size_t>(layout_.total);
  dev_->copy_to_device(params_.data(), host_params_.data(), n * 4);
  dev_->copy_to_device(m_.data(), host_m_.data(), n * 4);
  dev_->copy_to_device(v_.data(), host_v_.data(), n * 4);
  if (has_ref_) dev_->copy_to_device(ref_.data(), host_ref_.data(), n * 4);
  if (acc_.micro_batches > 0 && host_grads_.size() == n) dev_->copy_to_device(grads_.data(), host_grads_.data(), n * 4);
  host_params_ = HostBuffer(), host_m_ = HostBuffer(), host_v_ = HostBuffer(), host_ref_ = HostBuffer();
  host_grads_ = HostBuffer();
  onloaded_ = true;
}

const float* Engine::host_or_device(const DeviceBuffer& d, const HostBuffer& h) const {
  // On a CPU device both are host memory; a GPU backend would stage device buffers through a copy.
  return onloaded_ ? d.data() : h.data();
}

std::vector<std::string> Engine::save_checkpoint(const std::string& dir, bool with_optimizer) {
  // Checkpoints are step boundaries: pending gradients are not state a checkpoint can carry.
  require_no_pending("saveCheckpoint()");
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    fail("IO_ERROR", "cannot create checkpoint directory " + dir + ": " + std::strerror(errno));
  const float* p = host_or_device(params_, host_params_);
  std::vector<StTensorOut> weights;
  for (const auto& t : layout_.tensors) weights.push_back({t.name, t.shape, p + t.offset});
  std::map<std::string, std::string> meta{{"format", "pt"},
                                          {"weight_version", std::to_string(weight_version_)},
                                          {"producer", "timeshare-engine"}};
  std::vector<std::string> files{dir + "/model.safetensors"};
  write_safetensors(files[0], weights, meta);
  if (with_optimizer) {
    const float* m = host_or_device(m_, host_m_);
    const float* v = host_or_device(v_, host_v_);
    std::vector<StTensorOut> opt;
    for (const auto& t : layout_.tensors) opt.push_back({"exp_avg." + t.name, t.shape, m + t.offset});
    for (const auto& t : layout_.tensors) opt.push_back({"exp_avg_sq." + t.name, t.shape, v + t.offset});
    meta["optimizer_step"] = std::to_string(adam_step_);
    files.push_back(dir + "/optimizer.safetensors");
    write_safetensors(files[1], opt, meta);
  }
  return files;
}

void Engine::load_checkpoint(const std::string& dir, bool with_optimizer, int64_t weight_version,
                             int64_t optimizer_step, const std::array<uint64_t, 4>& rng_state) {
  drop_carried();  // sequences sampled by the weights being replaced
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  require_no_pending("loadCheckpoint()");
  // Read and validate everything before overwriting anything, so a corrupt file leaves the engine
  // as it was.
  StFile w = read_safetensors(dir + "/model.safetensors");
  std::vector<const float*> src;
  for (const auto& t : layout_.tensors) src.push_back(w.tensor(t.name, t.shape));
  StFile o;
  std::vector<const float*> ms, vs;
  if (with_optimizer) {
    o = read_safetensors(dir + "/optimizer.safetensors");
    for (const auto& t : layout_.tensors) ms.push_back(o.tensor("exp_avg." + t.name, t.shape));
    for (const auto& t : layout_.tensors) vs.push_back(o.tensor("exp_avg_sq." + t.name, t.shape));
  }
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const auto& t = layout_.tensors[i];
    dev_->copy_to_device(params_.data() + t.offset, src[i], t.size * 4);
    if (with_optimizer) {
      dev_->copy_to_device(m_.data() + t.offset, ms[i], t.size * 4);
      dev_->copy_to_device(v_.data() + t.offset, vs[i], t.size * 4);
    }
  }
  if (!with_optimizer) {
    std::fill(m_.data(), m_.data() + m_.size(), 0.0f);
    std::fill(v_.data(), v_.data() + v_.size(), 0.0f);
  }
  adam_step_ = with_optimizer ? optimizer_step : 0;
  weight_version_ = weight_version;
  rng_.set_state(rng_state);
}

uint64_t Engine::layout_hash() const {
  const ModelConfig& c = layout_.config;
  uint64_t h = 1469598103934665603ull;
  for (int v : {c.vocab, c.context, c.d_model, c.layers, c.heads, c.mlp_mult}) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return h;
}

std::string Engine::publish_weights(const std::string& name) {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  if (!publisher_) publisher_ = WeightShm::create(name, layout_.total, layout_hash());
  publisher_->publish(dev_->pool(), params_.data(), weight_version_);
  return publisher_->name();
}

int64_t Engine::attach_weights(const std::string& name) {
  if (!onloaded_) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
  subscriber_ = WeightShm::attach(name, layout_.total, layout_hash());
  // Take whatever is published now, even if its version number is not above ours: our own weights
  // are unrelated to the publisher's.
  const int64_t v = subscriber_->read_if_newer(dev_->pool(), params_.data(), -1);
  if (v >= 0) weight_version_ = v;
  return weight_version_;
}

int64_t Engine::pull_weights() {
  if (!subscriber_) return -1;
  const int64_t v = subscriber_->read_if_newer(dev_->pool(), params_.data(), weight_version_);
  if (v >= 0) weight_version_ = v;
  return v;
}

int64_t Engine::published_version() const {
  if (subscriber_) return subscriber_->latest_version();
  if (publisher_) return publisher_->latest_version();
  return -1;
}

}  // namespace ts
