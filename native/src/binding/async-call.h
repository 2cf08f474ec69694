#pragma once
// Runs engine work on a libuv worker thread and settles a promise (the sharp pattern): the JS-thread
// part copies arguments into plain C++ values, Execute() never touches JS, OnOK()/OnError() build
// the result or an Error that carries .code (and .needed/.available for budget errors).
#include <napi.h>

#include <functional>
#include <string>

#include "common/error.h"

namespace ts {

class AsyncCall : public Napi::AsyncWorker {
 public:
  using Work = std::function<void()>;
  using Done = std::function<Napi::Value(Napi::Env)>;
  using Finally = std::function<void()>;

  static Napi::Promise start(Napi::Env env, Work work, Done done, Finally fin = nullptr);

  void Execute() override;
  void OnOK() override;
  void OnError(const Napi::Error& e) override;

 private:
  AsyncCall(Napi::Env env, Work work, Done done, Finally fin);
  Napi::Promise::Deferred deferred_;
  Work work_;
  Done done_;
  Finally fin_;
  std::string code_ = "INTERNAL";
  uint64_t needed_ = 0, available_ = 0;
};

Napi::Error make_error(Napi::Env env, const std::string& code, const std::string& message, uint64_t needed = 0,
                       uint64_t available = 0);

// Runs fn on the JS thread, turning EngineError into a thrown JS error with .code.
template <typename F>
auto guard(Napi::Env env, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const EngineError& e) {
    throw make_error(env, e.code(), e.what(), e.needed(), e.available());
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw make_error(env, "INTERNAL", e.what());
  }
}

}  // namespace ts
