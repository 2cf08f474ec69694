#include "binding/async-call.h"

#include <new>

namespace ts {

Napi::Error make_error(Napi::Env env, const std::string& code, const std::string& message, uint64_t needed,
                       uint64_t available) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  if (needed || available) {
    e.Set("needed", Napi::Number::New(env, static_cast<double>(needed)));
    e.Set("available", Napi::Number::New(env, static_cast<double>(available)));
  }
  return e;
}

AsyncCall::AsyncCall(Napi::Env env, Work work, Done done, Finally fin)
    : Napi::AsyncWorker(env, "timeshare-engine"),
      deferred_(Napi::Promise::Deferred::New(env)),
      work_(std::move(work)),
      done_(std::move(done)),
      fin_(std::move(fin)) {}

Napi::Promise AsyncCall::start(Napi::Env env, Work work, Done done, Finally fin) {
  auto* call = new AsyncCall(env, std::move(work), std::move(done), std::move(fin));
  Napi::Promise p = call->deferred_.Promise();
  call->Queue();
  return p;
}

void AsyncCall::Execute() {
  try {
    work_();
  } catch (const EngineError& e) {
    code_ = e.code(), needed_ = e.needed(), available_ = e.available();
    SetError(e.what());
  } catch (const std::bad_alloc&) {
    code_ = "BUDGET_EXCEEDED";
    SetError("host memory exhausted");
  } catch (const std::exception& e) {
    code_ = "INTERNAL";
    SetError(e.what());
  } catch (...) {
    code_ = "INTERNAL";
    SetError("unknown native failure");
  }
}

void AsyncCall::OnOK() {
  if (fin_) fin_();
  try {
    deferred_.Resolve(done_(Env()));
  } catch (const Napi::Error& e) {
    deferred_.Reject(e.Value());
  } catch (const std::exception& e) {
    deferred_.Reject(make_error(Env(), "INTERNAL", e.what()).Value());
  }
}

void AsyncCall::OnError(const Napi::Error& e) {
  if (fin_) fin_();
  deferred_.Reject(make_error(Env(), code_, e.Message(), needed_, available_).Value());
}

}  // namespace ts
