#pragma once
#include <napi.h>

#include <memory>

#include "engine/engine.h"

namespace ts {

// The JS-visible NativeEngine (one ObjectWrap per engine, like better-sqlite3's Database). At most one
// call runs per instance: a second call while one is in flight is rejected with ENGINE_BUSY (the TS
// facade queues, so facade users never see it).
class EngineObject : public Napi::ObjectWrap<EngineObject> {
 public:
  static Napi::Function define(Napi::Env env);
  explicit EngineObject(const Napi::CallbackInfo& info);

 private:
  Napi::Value info(const Napi::CallbackInfo& info);
  Napi::Value warmup(const Napi::CallbackInfo& info);
  Napi::Value interrupt_warmup(const Napi::CallbackInfo& info);
  Napi::Value generate(const Napi::CallbackInfo& info);
  Napi::Value train(const Napi::CallbackInfo& info);
  Napi::Value accumulate(const Napi::CallbackInfo& info);
  Napi::Value train_call(const Napi::CallbackInfo& info, bool accumulate);
  Napi::Value apply_gradients(const Napi::CallbackInfo& info);
  Napi::Value discard_gradients(const Napi::CallbackInfo& info);
  Napi::Value rl_step(const Napi::CallbackInfo& info);
  Napi::Value evaluate(const Napi::CallbackInfo& info);
  Napi::Value reset_optimizer(const Napi::CallbackInfo& info);
  Napi::Value offload(const Napi::CallbackInfo& info);
  Napi::Value onload(const Napi::CallbackInfo& info);
  Napi::Value save_checkpoint(const Napi::CallbackInfo& info);
  Napi::Value load_checkpoint(const Napi::CallbackInfo& info);
  Napi::Value publish_weights(const Napi::CallbackInfo& info);
  Napi::Value attach_weights(const Napi::CallbackInfo& info);
  Napi::Value pull_weights(const Napi::CallbackInfo& info);
  Napi::Value close(const Napi::CallbackInfo& info);

  // Marks the engine busy and returns it; throws ENGINE_BUSY / ENGINE_CLOSED.
  std::shared_ptr<Engine> acquire();
  std::function<void()> release();

  std::shared_ptr<Engine> engine_;
  bool busy_ = false;
};

}  // namespace ts
