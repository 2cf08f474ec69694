#include "binding/engine-object.h"

#include <cstdio>
#include <functional>

#include "binding/async-call.h"
#include "binding/convert.h"
#include "common/clock.h"
#include "sync/weight-shm.h"
#include "tensor/sgemm.h"

namespace ts {

namespace {

Napi::Object profile_js(Napi::Env env, const Profile& p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("seconds", p.seconds);
  o.Set("tokens", static_cast<double>(p.tokens));
  o.Set("flops", static_cast<double>(p.flops));
  o.Set("peakArenaBytes", static_cast<double>(p.peak_arena_bytes));
  return o;
}

GenerateOptions gen_options(const Napi::Object& o) {
  GenerateOptions g;
  g.num_prompts = integer(o, "numPrompts", 64, 1, 65536);
  g.group = integer(o, "groupSize", 8, 1, 65536);
  g.split = str(o, "split", "train");
  g.sample.temperature = static_cast<float>(num(o, "temperature", 1.0, 0, 100));
  g.sample.top_p = static_cast<float>(num(o, "topP", 1.0, 1e-6, 1));
  g.sample.max_new_tokens = integer(o, "maxNewTokens", 0, 0, 4096);
  g.sample.stop_token = integer(o, "stopToken", -1, -1, 65535);
  g.sample.partial_tail = static_cast<float>(num(o, "partialTail", 0, 0, 0.99));
  g.sample.max_carries = integer(o, "maxCarries", 1, 0, 64);
  return g;
}

TrainOptions train_options(const Napi::Object& o) {
  TrainOptions t;
  t.loss.objective = parse_objective(str(o, "algorithm", "grpo"));
  if (t.loss.objective == Objective::Sft) fail("INVALID_ARGUMENT", "use warmup() for supervised training");
  t.loss.clip = static_cast<float>(num(o, "clip", 0.2, 0, 10));
  t.loss.kl_coef = static_cast<float>(num(o, "klCoef", 0, 0, 100));
  t.loss.is_truncation = static_cast<float>(num(o, "isTruncation", 5, 1, 1e6));
  t.loss.temperature = static_cast<float>(num(o, "temperature", 1, 1e-3, 100));
  t.adam.lr = static_cast<float>(num(o, "lr", 3e-4, 0, 10));
  t.adam.beta1 = static_cast<float>(num(o, "beta1", 0.9, 0, 0.999999));
  t.adam.beta2 = static_cast<float>(num(o, "beta2", 0.99, 0, 0.999999));
  t.adam.eps = static_cast<float>(num(o, "eps", 1e-8, 1e-12, 1));
  t.adam.weight_decay = static_cast<float>(num(o, "weightDecay", 0, 0, 10));
  t.adam.clip = static_cast<float>(num(o, "gradClip", 1.0, 0, 1e6));
  t.epochs = integer(o, "epochs", 1, 1, 16);
  return t;
}

Rollouts rollouts_from_js(const Napi::Object& o) {
  Rollouts r;
  r.B = integer(o, "batch", 0, 1, 65536);
  r.T = integer(o, "length", 0, 2, 4096);
  r.P = integer(o, "promptLength", 0, 1, 4096);
  r.group = integer(o, "groupSize", 1, 1, 65536);
  const size_t n = static_cast<size_t>(r.B) * r.T;
  r.tokens = typed<int32_t, napi_int32_array>(o, "tokens", n);
  r.pad = typed<int32_t, napi_int32_array>(o, "pad", r.B);
  r.logprobs = typed<float, napi_float32_array>(o, "logprobs", n);
  r.versions = typed<int32_t, napi_int32_array>(o, "versions", n);
  r.mask = typed<uint8_t, napi_uint8_array>(o, "mask", n);
  r.rewards = typed<float, napi_float32_array>(o, "rewards", r.B);
  r.lengths = typed<int32_t, napi_int32_array>(o, "lengths", r.B);
  return r;
}

Napi::Object rollouts_js(Napi::Env env, const Rollouts& r, int64_t published) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("batch", r.B);
  o.Set("length", r.T);
  o.Set("promptLength", r.P);
  o.Set("groupSize", r.group);
  o.Set("tokens", to_typed<Napi::Int32Array>(env, r.tokens));
  o.Set("pad", to_typed<Napi::Int32Array>(env, r.pad));
  o.Set("logprobs", to_typed<Napi::Float32Array>(env, r.logprobs));
  o.Set("versions", to_typed<Napi::Int32Array>(env, r.versions));
  o.Set("mask", to_typed<Napi::Uint8Array>(env, r.mask));
  o.Set("rewards", to_typed<Napi::Float32Array>(env, r.rewards));
  o.Set("lengths", to_typed<Napi::Int32Array>(env, r.lengths));
  o.Set("newTokens", static_cast<double>(r.new_tokens));
  o.Set("inflightUpdates", r.inflight_updates);
  o.Set("occupancy", r.occupancy);
  o.Set("carriedGroups", r.carried_groups);
  int32_t lo = INT32_MAX, hi = -1;
  for (int32_t v : r.versions)
    if (v >= 0) lo = std::min(lo, v), hi = std::max(hi, v);
  o.Set("minVersion", hi < 0 ? -1 : lo);
  o.Set("maxVersion", hi);
  // Lag: how far the oldest token's weights were behind the newest published version at the end.
  o.Set("versionLag", published >= 0 && hi >= 0 ? static_cast<double>(std::max<int64_t>(0, published - lo)) : 0.0);
  return o;
}

Napi::Object stats_js(Napi::Env env, const TrainStats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("loss", s.loss);
  o.Set("rewardMean", s.reward_mean);
  o.Set("rewardStd", s.reward_std);
  o.Set("kl", s.kl);
  o.Set("clipFraction", s.clip_fraction);
  o.Set("ratioMean", s.ratio_mean);
  o.Set("isWeightMean", s.is_weight_mean);
  o.Set("entropy", s.entropy);
  o.Set("gradNorm", s.grad_norm);
  o.Set("tokens", static_cast<double>(s.tokens));
  o.Set("weightVersion", static_cast<double>(s.weight_version));
  o.Set("seconds", s.seconds);
  o.Set("microBatches", s.micro_batches);
  return o;
}

std::string hex64(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

// A training call on the worker thread, profiled; answers with its stats and that profile.
Napi::Promise train_stats_call(Napi::Env env, std::shared_ptr<Engine> eng, AsyncCall::Finally fin,
                               std::function<TrainStats(Engine&)> work, bool profile_tokens) {
  auto st = std::make_shared<TrainStats>();
  auto prof = std::make_shared<Profile>();
  return AsyncCall::start(
      env,
      [eng, work, st, prof, profile_tokens] {
        eng->begin_call(*prof);
        const double t0 = now_seconds();
        *st = work(*eng);
        if (profile_tokens) prof->tokens = st->tokens;
        eng->end_call(*prof, t0);
        st->seconds = prof->seconds;
      },
      [st, prof](Napi::Env env) -> Napi::Value {
        Napi::Object o = stats_js(env, *st);
        o.Set("profile", profile_js(env, *prof));
        return o;
      },
      fin);
}

}  // namespace

Napi::Function EngineObject::define(Napi::Env env) {
  return DefineClass(env, "NativeEngine",
                     {InstanceMethod("info", &EngineObject::info), InstanceMethod("warmup", &EngineObject::warmup),
                      InstanceMethod("interruptWarmup", &EngineObject::interrupt_warmup),
                      InstanceMethod("generate", &EngineObject::generate), InstanceMethod("train", &EngineObject::train),
                      InstanceMethod("accumulate", &EngineObject::accumulate),
                      InstanceMethod("applyGradients", &EngineObject::apply_gradients),
                      InstanceMethod("discardGradients", &EngineObject::discard_gradients),
                      InstanceMethod("rlStep", &EngineObject::rl_step),
                      InstanceMethod("evaluate", &EngineObject::evaluate),
                      InstanceMethod("resetOptimizer", &EngineObject::reset_optimizer),
                      InstanceMethod("offload", &EngineObject::offload), InstanceMethod("onload", &EngineObject::onload),
                      InstanceMethod("saveCheckpoint", &EngineObject::save_checkpoint),
                      InstanceMethod("loadCheckpoint", &EngineObject::load_checkpoint),
                      InstanceMethod("publishWeights", &EngineObject::publish_weights),
                      InstanceMethod("attachWeights", &EngineObject::attach_weights),
                      InstanceMethod("pullWeights", &EngineObject::pull_weights),
                      InstanceMethod("close", &EngineObject::close)});
}

EngineObject::EngineObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineObject>(info) {
  guard(info.Env(), [&] {
    Napi::Object o = as_object(info[0], "options");
    EngineOptions e;
    e.threads = integer(o, "threads", 2, 1, 256);
    e.memory_bytes = static_cast<uint64_t>(num(o, "memoryBytes", 1073741824.0, 1024, 1e15));
    e.use_blas = str(o, "gemm", "own") == "blas";
    e.preset = str(o, "preset", "tiny");
    e.seed = static_cast<uint64_t>(num(o, "seed", 1, 0, 9007199254740991.0));
    if (e.preset.empty()) {
      Napi::Object m = as_object(o.Get("model"), "model");
      e.model.context = integer(m, "context", 32, 2, 4096);
      e.model.d_model = integer(m, "dModel", 128, 4, 4096);
      e.model.layers = integer(m, "layers", 2, 1, 64);
      e.model.heads = integer(m, "heads", 4, 1, 256);
      e.model.mlp_mult = integer(m, "mlpMult", 4, 1, 16);
    }
    Napi::Object t = as_object(o.Get("task"), "task");
    e.task.name = str(t, "name", "addition");
    e.task.digits = integer(t, "digits", 2, 1, 9);
    e.task.min_length = integer(t, "minLength", 3, 1, 64);
    e.task.max_length = integer(t, "maxLength", 6, 1, 64);
    e.task.alphabet = integer(t, "alphabet", 10, 2, 26);
    engine_ = std::make_shared<Engine>(e);
  });
}

std::shared_ptr<Engine> EngineObject::acquire() {
  if (!engine_) fail("ENGINE_CLOSED", "engine was closed");
  if (busy_) fail("ENGINE_BUSY", "another call is running on this engine; await it first");
  busy_ = true;
  return engine_;
}

std::function<void()> EngineObject::release() {
  Ref();  // keep this object alive until the call settles
  return [this] {
    busy_ = false;
    Unref();
  };
}

Napi::Value EngineObject::info(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (!engine_) fail("ENGINE_CLOSED", "engine was closed");
    if (busy_) fail("ENGINE_BUSY", "another call is running on this engine; await it first");
    Napi::Env env = info.Env();
    const Engine& e = *engine_;
    const ModelConfig& c = e.config();
    Napi::Object cfg = Napi::Object::New(env);
    cfg.Set("vocab", c.vocab), cfg.Set("context", c.context), cfg.Set("dModel", c.d_model);
    cfg.Set("layers", c.layers), cfg.Set("heads", c.heads), cfg.Set("mlpMult", c.mlp_mult);
    Napi::Object o = Napi::Object::New(env);
    o.Set("config", cfg);
    o.Set("parameters", static_cast<double>(e.layout().total));
    o.Set("stateBytes", static_cast<double>(e.state_bytes()));
    o.Set("onloaded", e.onloaded());
    o.Set("weightVersion", static_cast<double>(e.weight_version()));
    o.Set("optimizerStep", static_cast<double>(e.optimizer_step()));
    o.Set("pendingMicroBatches", e.pending_micro_batches());
    o.Set("lastFencingToken", Napi::BigInt::New(env, static_cast<uint64_t>(e.last_fencing_token())));
    o.Set("publishedVersion", static_cast<double>(e.published_version()));
    o.Set("arenaBytes", static_cast<double>(engine_->device().used_bytes()));
    o.Set("budgetBytes", static_cast<double>(engine_->device().budget_bytes()));
    o.Set("threads", engine_->device().threads());
    o.Set("kernel", sgemm_kernel_name());
    o.Set("vocabulary", e.task().symbol_names());
    o.Set("endToken", e.task().end_id());
    o.Set("padToken", e.task().pad_id());
    return o;
  });
}

// Synchronous and allowed while a call runs: it only raises a flag the warm-up loop reads.
Napi::Value EngineObject::interrupt_warmup(const Napi::CallbackInfo& info) {
  if (engine_) engine_->interrupt_warmup();
  return info.Env().Undefined();
}

Napi::Value EngineObject::warmup(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    WarmupOptions w;
    w.max_steps = integer(o, "maxSteps", 2000, 0, 10000000);
    w.batch_size = integer(o, "batchSize", 64, 1, 65536);
    w.target_accuracy = num(o, "targetAccuracy", 0.3, 0, 1);
    w.probe_every = integer(o, "probeEvery", 25, 1, 1000000);
    w.adam.lr = static_cast<float>(num(o, "lr", 1e-3, 0, 10));
    w.adam.beta1 = static_cast<float>(num(o, "beta1", 0.9, 0, 0.999999));
    w.adam.beta2 = static_cast<float>(num(o, "beta2", 0.99, 0, 0.999999));
    w.adam.weight_decay = static_cast<float>(num(o, "weightDecay", 0, 0, 10));
    w.adam.clip = static_cast<float>(num(o, "gradClip", 1.0, 0, 1e6));
    auto eng = acquire();
    auto res = std::make_shared<WarmupResult>();
    auto prof = std::make_shared<Profile>();
    return AsyncCall::start(
        info.Env(),
        [eng, w, res, prof] {
          eng->begin_call(*prof);
          const double t0 = now_seconds();
          *res = eng->warmup(w);
          prof->tokens = static_cast<int64_t>(res->steps) * w.batch_size *
                         (eng->task().max_prompt_tokens() + eng->task().max_new_tokens());
          eng->end_call(*prof, t0);
        },
        [res, prof](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("steps", res->steps);
          o.Set("probeAccuracy", res->probe_accuracy);
          o.Set("loss", res->loss);
          o.Set("tokenAccuracy", res->token_accuracy);
          o.Set("reached", res->reached);
          o.Set("interrupted", res->interrupted);
          o.Set("profile", profile_js(env, *prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::generate(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    GenerateOptions g = gen_options(o);
    const bool decode = boolean(o, "decode", false);
    auto eng = acquire();
    auto r = std::make_shared<Rollouts>();
    auto prof = std::make_shared<Profile>();
    auto texts = std::make_shared<std::vector<std::string>>();
    auto published = std::make_shared<int64_t>(-1);
    return AsyncCall::start(
        info.Env(),
        [eng, g, r, prof, decode, texts, published] {
          eng->begin_call(*prof);
          const double t0 = now_seconds();
          *r = eng->generate(g);
          prof->tokens = r->new_tokens;
          *published = eng->published_version();
          if (decode)
            for (int b = 0; b < r->B; ++b)
              texts->push_back(eng->task().decode(r->tokens.data() + static_cast<int64_t>(b) * r->T + r->pad[b],
                                                  r->P - r->pad[b] + r->lengths[b]));
          eng->end_call(*prof, t0);
        },
        [r, prof, texts, published](Napi::Env env) -> Napi::Value {
          Napi::Object o = rollouts_js(env, *r, *published);
          Napi::Array t = Napi::Array::New(env, texts->size());
          for (size_t i = 0; i < texts->size(); ++i) t.Set(static_cast<uint32_t>(i), (*texts)[i]);
          o.Set("texts", t);
          o.Set("profile", profile_js(env, *prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::train(const Napi::CallbackInfo& info) { return train_call(info, false); }

Napi::Value EngineObject::accumulate(const Napi::CallbackInfo& info) { return train_call(info, true); }

Napi::Value EngineObject::train_call(const Napi::CallbackInfo& info, bool accumulate) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Rollouts in = rollouts_from_js(as_object(info[0], "rollouts"));
    TrainOptions t = train_options(as_object(info[1], "options"));
    auto r = std::make_shared<Rollouts>(std::move(in));
    return train_stats_call(
        info.Env(), acquire(), release(),
        [r, t, accumulate](Engine& e) { return accumulate ? e.accumulate(*r, t) : e.train(*r, t); }, true);
  });
}

Napi::Value EngineObject::apply_gradients(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    // The profile counts no tokens: they were counted by the accumulating calls.
    return train_stats_call(info.Env(), acquire(), release(), [](Engine& e) { return e.apply_gradients(); },
                            false);
  });
}

Napi::Value EngineObject::discard_gradients(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto eng = acquire();
    auto n = std::make_shared<int>(0);
    return AsyncCall::start(
        info.Env(), [eng, n] { *n = eng->discard_gradients(); },
        [n](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("discarded", *n);
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::rl_step(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    GenerateOptions g = gen_options(as_object(info[0], "generate options"));
    TrainOptions t = train_options(as_object(info[1], "train options"));
    auto eng = acquire();
    struct Out {
      Rollouts r;
      TrainStats st;
      Profile gen, train, total;
      int64_t published = -1;
      // The version the rollouts were trained from: their staleness is computed in JS
      // (common/staleness.ts), the one home of the weight-lag rule.
      int64_t learner = -1;
    };
    auto out = std::make_shared<Out>();
    return AsyncCall::start(
        info.Env(),
        [eng, g, t, out] {
          eng->begin_call(out->total);
          const double t0 = now_seconds();
          eng->begin_call(out->gen);
          out->r = eng->generate(g);
          out->gen.tokens = out->r.new_tokens;
          eng->end_call(out->gen, t0);
          const double t1 = now_seconds();
          const uint64_t flops_gen = out->gen.flops;
          out->learner = eng->weight_version();
          out->st = eng->train(out->r, t);
          out->train.tokens = out->st.tokens;
          out->train.seconds = now_seconds() - t1;
          out->train.flops = eng->device().flops() - flops_gen;
          out->train.peak_arena_bytes = eng->device().peak_bytes();
          out->st.seconds = out->train.seconds;
          eng->end_call(out->total, t0);
          out->total.tokens = out->gen.tokens + out->train.tokens;
          out->published = eng->published_version();
        },
        [out](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("stats", stats_js(env, out->st));
          o.Set("newTokens", static_cast<double>(out->r.new_tokens));
          o.Set("inflightUpdates", out->r.inflight_updates);
          o.Set("occupancy", out->r.occupancy);
          o.Set("carriedGroups", out->r.carried_groups);
          o.Set("trainedSequences", out->r.B);
          o.Set("versions", to_typed<Napi::Int32Array>(env, out->r.versions));
          o.Set("learnerVersion", static_cast<double>(out->learner));
          Napi::Object p = Napi::Object::New(env);
          p.Set("generate", profile_js(env, out->gen));
          p.Set("train", profile_js(env, out->train));
          p.Set("total", profile_js(env, out->total));
          o.Set("profile", p);
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::evaluate(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Object o = as_object(info[0], "options");
    const std::string split = str(o, "split", "eval");
    const int limit = integer(o, "limit", 0, 0, 1000000);
    const int samples = integer(o, "samples", 0, 0, 1000);
    auto eng = acquire();
    auto res = std::make_shared<EvalResult>();
    auto prof = std::make_shared<Profile>();
    return AsyncCall::start(
        info.Env(),
        [eng, split, limit, samples, res, prof] {
          eng->begin_call(*prof);
          const double t0 = now_seconds();
          *res = eng->evaluate(split, limit, samples);
          eng->end_call(*prof, t0);
        },
        [res, prof](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("accuracy", res->accuracy);
          o.Set("problems", res->problems);
          Napi::Array s = Napi::Array::New(env, res->prompts.size());
          for (size_t i = 0; i < res->prompts.size(); ++i) {
            Napi::Object x = Napi::Object::New(env);
            x.Set("prompt", res->prompts[i]);
            x.Set("completion", res->completions[i]);
            s.Set(static_cast<uint32_t>(i), x);
          }
          o.Set("samples", s);
          o.Set("profile", profile_js(env, *prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::reset_optimizer(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto eng = acquire();
    return AsyncCall::start(
        info.Env(), [eng] { eng->reset_optimizer(); }, [](Napi::Env env) -> Napi::Value { return env.Undefined(); },
        release());
  });
}

Napi::Value EngineObject::offload(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto eng = acquire();
    auto prof = std::make_shared<Profile>();
    return AsyncCall::start(
        info.Env(),
        [eng, prof] {
          const double t0 = now_seconds();
          eng->device().reset_peak();
          eng->offload();
          prof->seconds = now_seconds() - t0;
          prof->peak_arena_bytes = eng->device().peak_bytes();
        },
        [prof, eng](Napi::Env env) -> Napi::Value {
          Napi::Object o = profile_js(env, *prof);
          o.Set("bytes", static_cast<double>(eng->state_bytes()));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::onload(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    uint64_t token = 0;
    if (info[0].IsBigInt()) {
      bool lossless = false;
      token = info[0].As<Napi::BigInt>().Uint64Value(&lossless);
      if (!lossless) fail("INVALID_ARGUMENT", "fencing token must be a non-negative 64-bit integer");
    } else if (info[0].IsNumber()) {
      const double d = info[0].As<Napi::Number>().DoubleValue();
      if (!(d >= 0) || d != std::floor(d) || d > 9007199254740991.0)
        fail("INVALID_ARGUMENT", "fencing token must be a non-negative safe integer or a bigint");
      token = static_cast<uint64_t>(d);
    } else {
      fail("INVALID_ARGUMENT", "fencing token must be a number or a bigint");
    }
    auto eng = acquire();
    auto prof = std::make_shared<Profile>();
    return AsyncCall::start(
        info.Env(),
        [eng, prof, token] {
          const double t0 = now_seconds();
          eng->device().reset_peak();
          eng->onload(token);
          prof->seconds = now_seconds() - t0;
          prof->peak_arena_bytes = eng->device().peak_bytes();
        },
        [prof, eng](Napi::Env env) -> Napi::Value {
          Napi::Object o = profile_js(env, *prof);
          o.Set("bytes", static_cast<double>(eng->state_bytes()));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::save_checkpoint(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (!info[0].IsString()) fail("INVALID_ARGUMENT", "checkpoint directory must be a string");
    const std::string dir = info[0].As<Napi::String>().Utf8Value();
    const bool with_opt = info[1].IsBoolean() ? info[1].As<Napi::Boolean>().Value() : true;
    auto eng = acquire();
    struct Out {
      std::vector<std::string> files;
      int64_t version = 0, step = 0;
      std::array<uint64_t, 4> rng{};
      Profile prof;
    };
    auto out = std::make_shared<Out>();
    return AsyncCall::start(
        info.Env(),
        [eng, dir, with_opt, out] {
          const double t0 = now_seconds();
          out->files = eng->save_checkpoint(dir, with_opt);
          out->version = eng->weight_version();
          out->step = eng->optimizer_step();
          out->rng = eng->rng_state();
          out->prof.seconds = now_seconds() - t0;
        },
        [out](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          Napi::Array f = Napi::Array::New(env, out->files.size());
          for (size_t i = 0; i < out->files.size(); ++i) f.Set(static_cast<uint32_t>(i), out->files[i]);
          o.Set("files", f);
          o.Set("weightVersion", static_cast<double>(out->version));
          o.Set("optimizerStep", static_cast<double>(out->step));
          Napi::Array r = Napi::Array::New(env, 4);
          for (uint32_t i = 0; i < 4; ++i) r.Set(i, hex64(out->rng[i]));
          o.Set("rngState", r);
          o.Set("profile", profile_js(env, out->prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::load_checkpoint(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (!info[0].IsString()) fail("INVALID_ARGUMENT", "checkpoint directory must be a string");
    const std::string dir = info[0].As<Napi::String>().Utf8Value();
    Napi::Object o = as_object(info[1], "checkpoint state");
    const bool with_opt = boolean(o, "withOptimizer", true);
    const int64_t version = static_cast<int64_t>(num(o, "weightVersion", 0, 0, 9007199254740991.0));
    const int64_t step = static_cast<int64_t>(num(o, "optimizerStep", 0, 0, 9007199254740991.0));
    Napi::Value rv = o.Get("rngState");
    if (!rv.IsArray() || rv.As<Napi::Array>().Length() != 4) fail("CORRUPT_CHECKPOINT", "rngState must be 4 hex strings");
    std::array<uint64_t, 4> rng{};
    for (uint32_t i = 0; i < 4; ++i) {
      Napi::Value s = rv.As<Napi::Array>().Get(i);
      if (!s.IsString()) fail("CORRUPT_CHECKPOINT", "rngState must be 4 hex strings");
      const std::string h = s.As<Napi::String>().Utf8Value();
      if (h.size() != 16 || h.find_first_not_of("0123456789abcdef") != std::string::npos)
        fail("CORRUPT_CHECKPOINT", "rngState must be 4 hex strings");
      rng[i] = std::stoull(h, nullptr, 16);
    }
    auto eng = acquire();
    auto prof = std::make_shared<Profile>();
    return AsyncCall::start(
        info.Env(),
        [eng, dir, with_opt, version, step, rng, prof] {
          const double t0 = now_seconds();
          eng->load_checkpoint(dir, with_opt, version, step, rng);
          prof->seconds = now_seconds() - t0;
        },
        [prof](Napi::Env env) -> Napi::Value { return profile_js(env, *prof); }, release());
  });
}

Napi::Value EngineObject::publish_weights(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (!info[0].IsString()) fail("INVALID_ARGUMENT", "shared-memory name must be a string");
    const std::string name = info[0].As<Napi::String>().Utf8Value();
    auto eng = acquire();
    auto prof = std::make_shared<Profile>();
    auto version = std::make_shared<int64_t>(0);
    auto used = std::make_shared<std::string>();
    return AsyncCall::start(
        info.Env(),
        [eng, name, prof, version, used] {
          const double t0 = now_seconds();
          *used = eng->publish_weights(name);
          *version = eng->weight_version();
          prof->seconds = now_seconds() - t0;
        },
        [prof, version, used, eng](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("name", *used);
          o.Set("version", static_cast<double>(*version));
          o.Set("bytes", static_cast<double>(eng->layout().total * 4));
          o.Set("profile", profile_js(env, *prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::attach_weights(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (!info[0].IsString()) fail("INVALID_ARGUMENT", "shared-memory name must be a string");
    const std::string name = info[0].As<Napi::String>().Utf8Value();
    auto eng = acquire();
    auto prof = std::make_shared<Profile>();
    auto version = std::make_shared<int64_t>(0);
    return AsyncCall::start(
        info.Env(),
        [eng, name, prof, version] {
          const double t0 = now_seconds();
          *version = eng->attach_weights(name);
          prof->seconds = now_seconds() - t0;
        },
        [prof, version](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("version", static_cast<double>(*version));
          o.Set("profile", profile_js(env, *prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::pull_weights(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto eng = acquire();
    auto version = std::make_shared<int64_t>(-1);
    auto prof = std::make_shared<Profile>();
    return AsyncCall::start(
        info.Env(),
        [eng, version, prof] {
          if (!eng->onloaded()) fail("NOT_ONLOADED", "engine state is offloaded; call onload(fencingToken) first");
          const double t0 = now_seconds();
          eng->pull_weights();
          *version = eng->weight_version();
          prof->seconds = now_seconds() - t0;
        },
        [version, prof](Napi::Env env) -> Napi::Value {
          Napi::Object o = Napi::Object::New(env);
          o.Set("version", static_cast<double>(*version));
          o.Set("profile", profile_js(env, *prof));
          return o;
        },
        release());
  });
}

Napi::Value EngineObject::close(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (busy_) fail("ENGINE_BUSY", "another call is running on this engine; await it first");
    engine_.reset();
    return info.Env().Undefined();
  });
}

}  // namespace ts
