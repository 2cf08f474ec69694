// Module entry: the NativeEngine class plus diagnostics. No global mutable state: everything hangs off
// engine instances, so the module is safe to load in worker threads too.
#include <napi.h>

#include "binding/engine-object.h"
#include "tensor/sgemm.h"

namespace ts {
Napi::Value bench_gemm(const Napi::CallbackInfo& info);
Napi::Value bench_copy(const Napi::CallbackInfo& info);
Napi::Value gemm_check(const Napi::CallbackInfo& info);
Napi::Value pool_check(const Napi::CallbackInfo& info);
Napi::Value grad_check_js(const Napi::CallbackInfo& info);
}  // namespace ts

static Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeEngine", ts::EngineObject::define(env));
  exports.Set("benchGemm", Napi::Function::New(env, ts::bench_gemm));
  exports.Set("benchCopy", Napi::Function::New(env, ts::bench_copy));
  exports.Set("gemmCheck", Napi::Function::New(env, ts::gemm_check));
  exports.Set("poolCheck", Napi::Function::New(env, ts::pool_check));
  exports.Set("gradCheck", Napi::Function::New(env, ts::grad_check_js));
  Napi::Object build = Napi::Object::New(env);
  build.Set("blas", ts::blas_available());
  build.Set("kernel", ts::sgemm_kernel_name());
  exports.Set("build", build);
  return exports;
}

NODE_API_MODULE(timeshare_engine, init)
